package api

import (
	"github.com/berth-dev/berth/server/internal/files"
	"github.com/berth-dev/berth/server/internal/registry"
	"github.com/berth-dev/berth/server/internal/volumes"
)

// contentOps: a container's files, a volume's content and exports, an
// image's export (docker save) and the registry browser.
var contentOps = map[string]apiOp{
	"GET /api/containers/{id}/files": {Summary: "A directory of a container (first level)", Response: files.Listing{},
		Query: []queryParam{{"path", "string", "the directory (default /)"}}},
	"GET /api/containers/{id}/files/content": {Summary: "A text file of a container", Response: files.Content{},
		Query: []queryParam{{"path", "string", "the file"}}},
	"GET /api/containers/{id}/files/download": {Summary: "Download a file or directory of a container, as a tar archive (gzip-compressed with format=tar.gz)",
		Content: mediaTar + ", application/gzip",
		Query:   []queryParam{{"path", "string", "the file or directory"}, {"format", "string", `"tar" (the default) or "tar.gz"`}}},
	"PUT /api/containers/{id}/files/content": {Summary: "Write a text file of a container", Request: fileWriteInput{}, Response: successAnswer{},
		Query: filePathQuery},
	"POST /api/containers/{id}/files/create": {Summary: "Create a file or directory in a container", Request: fileCreateInput{}, Response: successAnswer{},
		Query: append([]queryParam{{"type", "string", "file or directory (instead of the body's)"}}, filePathQuery...)},
	"DELETE /api/containers/{id}/files/delete": {Summary: "Delete a file or directory of a container (path in the query or the body)",
		Request: pathInput{}, Response: successAnswer{}, Query: filePathQuery},
	"POST /api/containers/{id}/files/rename": {Summary: "Rename or move a file of a container", Request: fileRenameInput{}, Response: successAnswer{},
		Query: append([]queryParam{{"newPath", "string", "the new path (instead of the body's)"}}, filePathQuery...)},
	"POST /api/containers/{id}/files/chmod": {Summary: "Change a file's mode in a container", Request: fileChmodInput{}, Response: successAnswer{},
		Query: filePathQuery},
	"POST /api/containers/{id}/files/upload": {Summary: "Upload files into a container's directory (multipart: a path part, then file parts)",
		Request: fileUploadForm{}, RequestContent: mediaMultipart, Response: uploadAnswer{},
		Query: []queryParam{{"path", "string", "the target directory (instead of the path part)"}}},
	"GET /api/containers/{id}/shells": {Summary: "The shells available in a container", Response: files.Shells{}},
	"POST /api/containers/{id}/update": {Summary: "Change a container's settings: resources and restart policy in place; anything else recreates it with the body merged over its configuration (the old one comes back if the new one fails)",
		Request: updateContainerInput{}, Response: containerUpdatedAnswer{}},
	"POST /api/containers/{id}/update-runtime": {Summary: "Change a container's resources and restart policy", Request: updateContainerRequest{},
		Response: containerUpdateAnswer{}},

	"GET /api/volumes/{name}/browse": {Summary: "A directory of a volume (first level)", Response: volumes.Listing{},
		Query: []queryParam{{"path", "string", "the directory (default /)"}}},
	"GET /api/volumes/{name}/browse/content": {Summary: "A text file of a volume", Response: volumes.Content{},
		Query: []queryParam{{"path", "string", "the file"}}},
	"POST /api/volumes/{name}/browse/release": {Summary: "Stop the helper container browsing a volume", Response: releasedAnswer{}},
	"POST /api/volumes/{name}/clone":          {Summary: "Copy a volume into a new one", Request: nameInput{}, Response: cloneAnswer{}},
	"GET /api/volumes/{name}/export": {Summary: "Download a volume's content, or a path inside it, as a tar archive (format=tar.gz: gzipped; format=raw: a file's bytes alone)",
		Content: mediaTar + ", application/gzip, application/octet-stream", Query: []queryParam{
			{"path", "string", "a path inside the volume (default /, all of it); links on the way are followed only inside the volume"},
			{"format", "string", "tar (default), tar.gz, or raw (a file's bytes alone; a directory is a tar)"},
			{"compress", "string", "Berth's alias: gzip (= format=tar.gz) or none (= format=tar)"}}},
	"GET /api/images/{id}/export": {Summary: "Download an image as the engine saves it (a docker save tar archive; compress=true: gzipped)",
		Content: mediaTar + ", application/gzip", Query: []queryParam{{"compress", "boolean", "true: a gzipped tar (.tar.gz); false (default): a tar"}}},

	"GET /api/registry/catalog": {Summary: "A page of a registry's repositories", Response: catalogJSON{}, Query: append([]queryParam{
		{"n", "integer", "page size"}, {"last", "string", "the last repository of the previous page"}}, registryQuery...)},
	"GET /api/registry/search": {Summary: "Search a registry's repositories (without registry: Docker Hub's)", Response: []registry.SearchResult{},
		Query: append([]queryParam{{"term", "string", "the search words (q: the same)"}, {"q", "string", "term's older name"},
			{"limit", "integer", "at most this many results (default 25)"}}, registryQuery...)},
	"GET /api/registry/tags": {Summary: "A page of a repository's tags (without registry: Docker Hub's)", Response: registryTagsJSON{},
		Query: append([]queryParam{{"image", "string", "the repository"}, {"repository", "string", "image's older name"},
			{"page", "integer", "the page, from 1"}, {"pageSize", "integer", "tags a page (a registry's: all unless sent; Docker Hub's: 20)"}}, registryQuery...)},
	"DELETE /api/registry/image": {Summary: "Delete a tag's manifest from a registry", Response: digestAnswer{},
		Query: append([]queryParam{{"image", "string", "the repository"}, {"repository", "string", "image's older name"}, {"tag", "string", "the tag"}}, registryQuery...)},
	"POST /api/registries/{id}/default": {Summary: "Make a registry the default", Response: registryJSON{}},
}

var filePathQuery = []queryParam{{"path", "string", "the file (instead of the body's)"}}

var registryQuery = []queryParam{{"registry", "integer", "the registry's id"}}

type fileWriteInput struct {
	Path    string  `json:"path"`
	Content *string `json:"content"`
}

type fileCreateInput struct {
	Path        string `json:"path"`
	Type        string `json:"type"` // file or directory
	IsDirectory bool   `json:"isDirectory"`
}

type pathInput struct {
	Path string `json:"path"`
}

// fileRenameInput names the file (path, oldPath or from) and its new path
// (newPath or to) or its new name (newName).
type fileRenameInput struct {
	Path    string `json:"path"`
	OldPath string `json:"oldPath"`
	From    string `json:"from"`
	NewPath string `json:"newPath"`
	To      string `json:"to"`
	NewName string `json:"newName"`
}

type fileChmodInput struct {
	Path      string   `json:"path"`
	Mode      fileMode `json:"mode"`
	Recursive bool     `json:"recursive"`
}

// fileUploadForm is the multipart form of an upload: the target directory
// (a path part, unless ?path= names it), then any number of file parts.
type fileUploadForm struct {
	Path string       `json:"path"`
	File []formBinary `json:"file"`
}

// formBinary is a file part of a multipart form.
type formBinary string

type uploadAnswer struct {
	Success bool     `json:"success"`
	Files   []string `json:"files"`
}

type containerUpdateAnswer struct {
	Success bool `json:"success"`
	files.UpdateResult
}

type releasedAnswer struct {
	Success  bool `json:"success"`
	Released bool `json:"released"`
}

type cloneAnswer struct {
	Success bool   `json:"success"`
	Name    string `json:"name"`
	Source  string `json:"source"`
}

type digestAnswer struct {
	Success bool   `json:"success"`
	Digest  string `json:"digest"`
	Message string `json:"message"`
}
