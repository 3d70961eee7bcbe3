package stacks

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/berth-dev/berth/shared/fault"
)

func TestEnvFileRoundTripsEveryValue(t *testing.T) {
	vars := []Variable{
		{Key: "PLAIN", Value: "hello"},
		{Key: "SPACES", Value: "hello world"},
		{Key: "EMPTY", Value: ""},
		{Key: "QUOTE", Value: `it's "quoted"`},
		{Key: "DOLLAR", Value: "pa$$word ${HOME}"},
		{Key: "HASH", Value: "a # not a comment"},
		{Key: "NEWLINE", Value: "line1\nline2"},
		{Key: "BACKSLASH", Value: `C:\path\n`},
		{Key: "EQUALS", Value: "a=b=c"},
		{Key: "UNICODE", Value: "grüße ✓"},
	}
	got, err := parseEnv(renderEnv(vars))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(vars, got); diff != "" {
		t.Errorf("parse(render(vars)) (-want +got):\n%s\nfile:\n%s", diff, renderEnv(vars))
	}
}

func TestParseEnvKeepsFileOrder(t *testing.T) {
	got, err := parseEnv([]byte("# comment\nZ=1\nexport A=2\n\nM: 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Variable{{Key: "Z", Value: "1"}, {Key: "A", Value: "2"}, {Key: "M", Value: "3"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestWithoutKeysDropsOnlyTheSecretsLines(t *testing.T) {
	in := "# keep me\nA=1\nSECRET=x\nexport SECRET=y\nSECRETS=keep\n# SECRET=in a comment\n"
	want := "# keep me\nA=1\nSECRETS=keep\n# SECRET=in a comment\n"
	if got := withoutKeys(in, map[string]bool{"SECRET": true}); got != want {
		t.Errorf("withoutKeys = %q, want %q", got, want)
	}
}

func TestNamesAndPathsCannotTraverse(t *testing.T) {
	for _, name := range []string{"web", "a1", "my-stack_2"} {
		if err := CheckName(name); err != nil {
			t.Errorf("CheckName(%q) = %v", name, err)
		}
	}
	for _, name := range []string{"", "..", "../x", "a/b", "Web", "-x", "_x", "a b", "a\x00", strings.Repeat("a", 64)} {
		if err := CheckName(name); fault.KindOf(err) != fault.Invalid {
			t.Errorf("CheckName(%q) = %v, want invalid", name, err)
		}
	}
}

func TestSplitVariablesRefusesBadAndDuplicateKeys(t *testing.T) {
	for _, vars := range [][]Variable{{{Key: ""}}, {{Key: "1A"}}, {{Key: "A B"}}, {{Key: "A"}, {Key: "A", IsSecret: true}}} {
		if _, _, err := splitVariables(vars); fault.KindOf(err) != fault.Invalid {
			t.Errorf("splitVariables(%v) = %v, want invalid", vars, err)
		}
	}
}

func FuzzEnvRoundTrip(f *testing.F) {
	f.Add("hello world")
	f.Add(`it's "x" $y \n`)
	f.Add("a\nb\r\nc")
	f.Fuzz(func(t *testing.T, value string) {
		if strings.ContainsRune(value, 0) || !utf8Valid(value) {
			return
		}
		vars := []Variable{{Key: "K", Value: value}, {Key: "NEXT", Value: "after"}}
		got, err := parseEnv(renderEnv(vars))
		if err != nil {
			t.Fatalf("render of %q does not parse: %v\n%s", value, err, renderEnv(vars))
		}
		if !cmp.Equal(vars, got) {
			t.Fatalf("value %q came back as %+v\nfile:\n%s", value, got, renderEnv(vars))
		}
	})
}

func FuzzParseEnv(f *testing.F) {
	f.Add([]byte("# c\nA=1\nexport B='x y'\nC=\"q\\n\"\n"))
	f.Fuzz(func(t *testing.T, content []byte) {
		vars, err := parseEnv(content)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, v := range vars {
			if seen[v.Key] {
				t.Fatalf("key %q twice in %+v", v.Key, vars)
			}
			seen[v.Key] = true
		}
	})
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }
