package api

import (
	"encoding/json"
	"github.com/berth-dev/berth/server/internal/gitops"
	"github.com/berth-dev/berth/server/internal/stacks"
)

// helperOps: the stack path and env helpers and the git helpers.
var helperOps = map[string]apiOp{
	"GET /api/stacks/sources":   {Summary: "Where the environment's stacks come from", Response: stacks.Sources{}},
	"GET /api/stacks/base-path": {Summary: "The directory of the environment's stacks", Response: basePathAnswer{}},
	"GET /api/stacks/default-path": {Summary: "Where a new stack's files would go", Response: stacks.DefaultPath{}, Query: []queryParam{{"name", "string", "the stack's name"},
		{"location", "string", "a base directory instead of the environment's stack directory (under the stack roots)"}}},
	"GET /api/stacks/path-hints": {Summary: "Directories to suggest for a stack's files", Response: stacks.PathHints{}, Query: []queryParam{{"prefix", "string", "what was typed so far"},
		{"name", "string", "a compose project: also its working directory and compose files from its containers' labels"}}},
	"POST /api/stacks/validate-path": {Summary: "Check a directory for a stack's files", Request: pathInput{}, Response: stacks.PathCheck{}},
	"POST /api/stacks/{name}/check-path-change": {Summary: "What moving a stack's files to a directory would do", Request: pathChangeInput{},
		Response: stacks.PathChange{}},
	"POST /api/stacks/{name}/relocate":     {Summary: "Move a stack's files to a directory", Request: pathChangeInput{}, Response: relocateAnswer{}},
	"POST /api/stacks/{name}/env/validate": {Summary: "Check variables (or .env content) against the stack's compose file", Request: envValidateInput{}, Response: stacks.EnvReport{}},
	"GET /api/stacks/{name}/delete-preview": {Summary: "What deleting a stack would remove", Response: stacks.DeletePreview{},
		Query: []queryParam{{"force", "boolean", "as a forced delete would"}}},

	"POST /api/git/repositories/test":      {Summary: "Probe an unsaved repository (URL, branch, credential)", Request: probeRequest{}, Response: gitops.ProbeResult{}},
	"POST /api/git/repositories/{id}/test": {Summary: "Probe a saved repository", Response: gitops.ProbeResult{}},
	"GET /api/git/repositories/{id}/sync":  {Summary: "A repository mirror's last fetch", Response: syncAnswer{}},
	"POST /api/git/repositories/{id}/sync": {Summary: "Fetch a repository's branch into its mirror now", Response: syncAnswer{}},
	"POST /api/git/repositories/{id}/deploy": {Summary: "Deploy every git stack of a repository: a job ({jobId}; with Accept: application/json, its result)",
		Response: anyOf{jobStartAnswer{}, repositoryDeployResult{}}},
	"POST /api/git/stacks/{id}/test":      {Summary: "Check a git stack's compose and env files at the branch head", Response: gitops.StackTest{}},
	"GET /api/git/stacks/{id}/env-files":  {Summary: "The env files of a git stack's repository", Response: gitops.EnvFiles{}, IgnoresBody: true},
	"POST /api/git/stacks/{id}/env-files": {Summary: "The variables of one env file of a git stack's repository", Request: pathInput{}, Response: gitops.EnvFileVariables{}},
	"POST /api/git/stacks/{id}/deploy-stream": {Summary: "Deploy a git stack: its job's events, ending with the result", Content: mediaSSE, AlsoJSON: true,
		Response: gitDeployResult{}, Header: "X-Job-Id"},
	"POST /api/git/preview-env": {Summary: "The variables of a repository's compose and env files, before saving a git stack", Request: previewEnvInput{},
		Response: gitops.EnvPreview{}},

	"GET /api/settings/stack-roots": {Summary: "The external stack roots: directories outside DATA_DIR/stacks where stack files may live", Response: stackRoots{}},
	"PUT /api/settings/stack-roots": {Summary: "Set the external stack roots (absolute, existing directories outside DATA_DIR)", Request: stackRoots{},
		Response: stackRoots{}},
}

type basePathAnswer struct {
	BasePath      string `json:"basePath"`
	EnvironmentID int64  `json:"environmentId"`
}

type envValidateInput struct {
	Content   *string      `json:"content"`
	Variables variableList `json:"variables"`
	Compose   *string      `json:"compose"` // the reference's: compose text to validate against instead of the stored file
}

type syncAnswer struct {
	Success bool `json:"success"`
	gitops.SyncStatus
}

// repositoryDeployResult is a repository deploy's final payload.
type repositoryDeployResult struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
	Results []struct {
		GitStackID int64  `json:"gitStackId"`
		StackName  string `json:"stackName"`
		Success    bool   `json:"success"`
		Deployed   bool   `json:"deployed,omitempty"`
		Commit     string `json:"commit,omitempty"`
		Message    string `json:"message,omitempty"`
		Error      string `json:"error,omitempty"`
	} `json:"results"`
	Output string `json:"output"`
	Error  string `json:"error,omitempty"`
}

type previewEnvInput struct {
	probeRequest
	RepositoryID *int64 `json:"repositoryId"`
	ComposePath  string `json:"composePath"`
	EnvFilePath  string `json:"envFilePath"`
}

// variableList is a list of variables as Berth's console sends them,
// [{key, value, isSecret}], or as the reference's clients do: the names
// defined, ["NAME", …].
type variableList []stacks.Variable

// UnmarshalJSON takes either form, element by element.
func (l *variableList) UnmarshalJSON(b []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if raw == nil {
		*l = nil
		return nil
	}
	out := make(variableList, 0, len(raw))
	for _, r := range raw {
		var name string
		if json.Unmarshal(r, &name) == nil {
			out = append(out, stacks.Variable{Key: name})
			continue
		}
		var v stacks.Variable
		if err := json.Unmarshal(r, &v); err != nil {
			return err
		}
		out = append(out, v)
	}
	*l = out
	return nil
}
