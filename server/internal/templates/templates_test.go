package templates

import (
	"os"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/server/internal/stacks"
)

func TestParseReadsPortainerVersion2AndSkipsWhatIsNotATemplate(t *testing.T) {
	data, err := os.ReadFile("testdata/portainer-v2.json")
	if err != nil {
		t.Fatal(err)
	}
	list, skipped, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if skipped != 3 {
		t.Errorf("skipped = %d, want 3", skipped)
	}
	var titles []string
	for _, tp := range list {
		titles = append(titles, tp.Title)
	}
	if diff := cmp.Diff([]string{"Registry", "MySQL", "CockroachDB", "Wordpress"}, titles); diff != "" {
		t.Fatalf("titles (-want +got):\n%s", diff)
	}
	mysql := list[1]
	want := Template{Type: TypeContainer, Title: "MySQL", Description: "The most popular open-source database",
		Categories: []string{"database"}, Platform: "linux", Image: "mysql:latest",
		Env: []EnvField{
			{Name: "MYSQL_ROOT_PASSWORD", Label: "Root password"},
			{Name: "MODE", Label: "Mode", Select: []Option{{Text: "Fast", Value: "fast"}, {Text: "Safe", Value: "safe", Default: true}}},
			{Name: "PRESET", Default: "fixed", Preset: true},
		},
		Ports:         []string{"3306/tcp"},
		Volumes:       []Volume{{Container: "/var/lib/mysql"}, {Container: "/etc/mysql/conf.d", Bind: "/srv/conf", ReadOnly: true}},
		Labels:        []Pair{{Name: "com.example.vendor", Value: "Acme $corp"}},
		RestartPolicy: "unless-stopped", Command: "mysqld --character-set-server=utf8mb4", AdministratorOnly: true}
	if diff := cmp.Diff(want, mysql); diff != "" {
		t.Errorf("MySQL (-want +got):\n%s", diff)
	}
	if list[3].Type != TypeCompose || list[3].Repository == nil || list[3].Repository.StackFile != "stacks/wordpress/docker-compose.yml" {
		t.Errorf("Wordpress = %+v", list[3])
	}
}

func TestParseRefusesWhatIsNotATemplateList(t *testing.T) {
	for name, in := range map[string]string{
		"not JSON":         `{"version": "2", "templates": [`,
		"no version":       `{"templates": []}`,
		"version 1":        `{"version": "1", "templates": []}`,
		"no templates":     `{"version": "3"}`,
		"templates not []": `{"version": "2", "templates": {}}`,
	} {
		if _, _, err := Parse([]byte(in)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestBuiltinTemplatesParseAndRenderValidCompose(t *testing.T) {
	s := New(Options{Log: discardLog()})
	if len(s.builtin) < 5 {
		t.Fatalf("built-in templates: %d, want at least 5", len(s.builtin))
	}
	ids := map[string]bool{}
	for _, tp := range s.builtin {
		if ids[tp.ID] || !strings.HasPrefix(tp.ID, "builtin:") {
			t.Errorf("id %q repeated or not builtin:<slug>", tp.ID)
		}
		ids[tp.ID] = true
		r, err := Render(tp, map[string]string{"POSTGRES_PASSWORD": "pw", "DB_PASSWORD": "pw"}, nil)
		if err != nil {
			t.Fatalf("%s: %v", tp.ID, err)
		}
		load(t, r)
	}
}

// load parses a rendered template as compose does, with its variables.
func load(t *testing.T, r Rendered) *types.Project {
	t.Helper()
	env := map[string]string{}
	for _, v := range r.EnvVars {
		env[v.Key] = v.Value
	}
	p, err := loader.LoadWithContext(t.Context(), types.ConfigDetails{WorkingDir: t.TempDir(), Environment: env,
		ConfigFiles: []types.ConfigFile{{Filename: "compose.yaml", Content: []byte(r.Compose)}}},
		func(o *loader.Options) { o.SetProjectName("test", true) })
	if err != nil {
		t.Fatalf("compose:\n%s\n%v", r.Compose, err)
	}
	return p
}

func TestRenderContainerTemplate(t *testing.T) {
	data, _ := os.ReadFile("testdata/portainer-v2.json")
	list, _, _ := Parse(data)
	mysql := list[1]
	r, err := Render(mysql, map[string]string{"MYSQL_ROOT_PASSWORD": "s3cret", "PRESET": "ignored", "EXTRA": "x"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantVars := []stacks.Variable{
		{Key: "MYSQL_ROOT_PASSWORD", Value: "s3cret", IsSecret: true},
		{Key: "MODE", Value: "safe"},
		{Key: "PRESET", Value: "fixed"},
		{Key: "EXTRA", Value: "x"},
	}
	if diff := cmp.Diff(wantVars, r.EnvVars); diff != "" {
		t.Errorf("variables (-want +got):\n%s", diff)
	}
	p := load(t, r)
	svc, ok := p.Services["mysql"]
	if !ok {
		t.Fatalf("services: %v", p.ServiceNames())
	}
	if svc.Image != "mysql:latest" || svc.Restart != "unless-stopped" {
		t.Errorf("image %q restart %q", svc.Image, svc.Restart)
	}
	if diff := cmp.Diff(types.ShellCommand{"mysqld", "--character-set-server=utf8mb4"}, svc.Command); diff != "" {
		t.Errorf("command (-want +got):\n%s", diff)
	}
	if got := *svc.Environment["MYSQL_ROOT_PASSWORD"]; got != "s3cret" {
		t.Errorf("MYSQL_ROOT_PASSWORD = %q", got)
	}
	if svc.Labels["com.example.vendor"] != "Acme $corp" {
		t.Errorf("label = %q ('$' must stay literal)", svc.Labels["com.example.vendor"])
	}
	if len(svc.Ports) != 1 || svc.Ports[0].Target != 3306 || svc.Ports[0].Protocol != "tcp" {
		t.Errorf("ports = %+v", svc.Ports)
	}
	if len(svc.Volumes) != 2 || svc.Volumes[0].Target != "/var/lib/mysql" || svc.Volumes[1].Source != "/srv/conf" || !svc.Volumes[1].ReadOnly {
		t.Errorf("volumes = %+v", svc.Volumes)
	}
}

func TestRenderRefusals(t *testing.T) {
	data, _ := os.ReadFile("testdata/portainer-v2.json")
	list, _, _ := Parse(data)
	cases := []struct {
		name   string
		tp     Template
		values map[string]string
		want   string
	}{
		{"select outside its options", list[1], map[string]string{"MODE": "reckless"}, "Invalid value for MODE: choose one of the template's options"},
		{"swarm", list[2], nil, "Swarm stack templates (type 2) are not supported: Berth deploys compose stacks, not swarm services; use a compose stack template (type 3)"},
		{"repository", list[3], nil, "repository templates are not supported yet"},
		{"bad port", Template{Type: TypeContainer, Title: "x", Image: "x", Ports: []string{"80:abc"}}, nil, `Template port "80:abc" is not of the form [hostPort:]containerPort[/protocol]`},
		{"bad restart policy", Template{Type: TypeContainer, Title: "x", Image: "x", RestartPolicy: "sometimes"}, nil, `Template restart policy "sometimes" is not one of always, no, on-failure, unless-stopped`},
	}
	for _, c := range cases {
		_, err := Render(c.tp, c.values, nil)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
}

// A compose stack template of a git repository resolves to its URL, stack
// file and variables; a swarm one is refused whatever it holds, and a
// template without a repository is not one.
func TestRenderRepository(t *testing.T) {
	data, _ := os.ReadFile("testdata/portainer-v2.json")
	list, _, _ := Parse(data)
	wp := list[3]
	if !wp.FromRepository() || !list[2].FromRepository() || list[0].FromRepository() {
		t.Fatalf("FromRepository: wordpress %v, cockroach %v, registry %v", wp.FromRepository(), list[2].FromRepository(), list[0].FromRepository())
	}
	wp.Env = []EnvField{{Name: "DB_PASSWORD", Default: "x"}, {Name: "SIZE", Select: []Option{{Value: "s", Default: true}, {Value: "l"}}}}
	got, err := RenderRepository(wp, map[string]string{"DB_PASSWORD": "pw", "EXTRA": "1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := RepositoryStack{URL: "https://github.com/portainer/templates", StackFile: "stacks/wordpress/docker-compose.yml",
		EnvVars: []stacks.Variable{{Key: "DB_PASSWORD", Value: "pw", IsSecret: true}, {Key: "SIZE", Value: "s"}, {Key: "EXTRA", Value: "1"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("RenderRepository (-want +got):\n%s", diff)
	}
	inline := wp
	inline.Compose = "services: {}\n"
	noURL := wp
	noURL.Repository = &Repository{StackFile: "x.yml"}
	for _, c := range []struct {
		name string
		tp   Template
		want string
	}{
		{"swarm", list[2], "Swarm stack templates (type 2) are not supported: Berth deploys compose stacks, not swarm services; use a compose stack template (type 3)"},
		{"container", list[0], "Template 'Registry' has no repository"},
		{"inline compose", inline, "Template 'Wordpress' has no repository"},
		{"no URL", noURL, "Template 'Wordpress' names no repository URL"},
	} {
		if _, err := RenderRepository(c.tp, nil, nil); err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if _, err := RenderRepository(wp, map[string]string{"SIZE": "xl"}, nil); err == nil {
		t.Error("a select outside its options was accepted")
	}
}

func FuzzParse(f *testing.F) {
	data, _ := os.ReadFile("testdata/portainer-v2.json")
	f.Add(data)
	f.Add(builtinJSON)
	f.Fuzz(func(t *testing.T, b []byte) {
		list, _, err := Parse(b)
		if err != nil {
			return
		}
		for _, tp := range list {
			_, _ = Render(tp, nil, nil)
		}
	})
}
