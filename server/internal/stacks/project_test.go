package stacks

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/berth-dev/berth/shared/fault"
)

// TestComposeReadsOnlyFilesNextToIt: a compose file cannot make Berth read
// a file outside its own directory (Berth's key, say) through env_file,
// label_file, include or extends — directly or through a link — and the
// refusal never quotes what the file holds; files next to it are read.
func TestComposeReadsOnlyFilesNextToIt(t *testing.T) {
	outside := t.TempDir()
	secretFile := filepath.Join(outside, "key")
	const secret = "b3a1c0ffee0ddba11deadbeef0123456789abcdef0123456789abcdef012345"
	if err := os.WriteFile(secretFile, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	outsideCompose := filepath.Join(outside, "base.yaml")
	if err := os.WriteFile(outsideCompose, []byte("services:\n  base:\n    image: busybox\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	load := func(t *testing.T, compose string, prepare func(dir string)) error {
		t.Helper()
		dir := t.TempDir()
		if prepare != nil {
			prepare(dir)
		}
		p, err := projectSource{name: "probe", composePath: filepath.Join(dir, ComposeFileName), content: []byte(compose)}.load(context.Background())
		if err == nil && compose != "" {
			if env := p.Services["web"].Environment["GREETING"]; env == nil || *env != "hello" {
				t.Errorf("env_file next to the compose file not read: GREETING = %v", env)
			}
		}
		return err
	}
	for _, tt := range []struct {
		name, compose string
		prepare       func(dir string)
	}{
		{"env_file", "services:\n  web:\n    image: busybox\n    env_file: " + secretFile + "\n", nil},
		{"env_file climbing", "services:\n  web:\n    image: busybox\n    env_file: ../../" + filepath.Base(outside) + "/key\n", nil},
		{"env_file through a link", "services:\n  web:\n    image: busybox\n    env_file: ./linked.env\n", func(dir string) {
			if err := os.Symlink(secretFile, filepath.Join(dir, "linked.env")); err != nil {
				t.Fatal(err)
			}
		}},
		{"label_file", "services:\n  web:\n    image: busybox\n    label_file: " + secretFile + "\n", nil},
		{"include", "include:\n  - " + outsideCompose + "\nservices:\n  web:\n    image: busybox\n", nil},
		{"include of the key", "include:\n  - " + secretFile + "\nservices:\n  web:\n    image: busybox\n", nil},
		{"extends", "services:\n  web:\n    image: busybox\n    extends:\n      file: " + outsideCompose + "\n      service: base\n", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := load(t, tt.compose, tt.prepare)
			f, ok := fault.As(err)
			if !ok || f.Kind != fault.Forbidden || !strings.Contains(f.Message, "outside the stack's directory") {
				t.Fatalf("load = %v, want a 403 naming the rule", err)
			}
			if strings.Contains(err.Error(), secret[:16]) {
				t.Errorf("the refusal quotes the file's content: %v", err)
			}
		})
	}
	t.Run("files next to it", func(t *testing.T) {
		err := load(t, "include:\n  - extra.yaml\nservices:\n  web:\n    image: busybox\n    env_file: web.env\n    label_file: web.labels\n",
			func(dir string) {
				for name, content := range map[string]string{"web.env": "GREETING=hello\n", "web.labels": "team=a\n",
					"extra.yaml": "services:\n  extra:\n    image: busybox\n"} {
					if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
						t.Fatal(err)
					}
				}
			})
		if err != nil {
			t.Fatalf("load = %v", err)
		}
	})
}
