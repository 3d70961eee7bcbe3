package backup

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/berth-dev/berth/shared/fault"
	"github.com/google/go-cmp/cmp"
)

func TestParseRepositoryTellsTheTypeAndRefusesTheOthers(t *testing.T) {
	for s, want := range map[string]string{
		"/srv/restic":                          TypeLocal,
		"sftp:backup@nas:/srv/restic":          TypeSFTP,
		"sftp:backup@nas:restic":               TypeSFTP,
		"sftp://backup@nas:2222//srv/restic":   TypeSFTP,
		"rest:http://127.0.0.1:8000/repo/":     TypeREST,
		"rest:https://u:p@backup.example/repo": TypeREST,
		"s3:https://s3.example:9000/bucket/p":  TypeS3,
		"s3:s3.amazonaws.com/bucket":           TypeS3,
	} {
		if got, err := ParseRepository(s); err != nil || got != want {
			t.Errorf("ParseRepository(%q) = %q, %v; want %q", s, got, err, want)
		}
	}
	for _, s := range []string{
		"", " /srv", "/", "relative/path", "/srv/../etc", "/srv/a:b",
		"rclone:remote:path", "b2:bucket:path", "azure:c:/", "gs:b:/", "swift:c:/", "unknown",
		"sftp:nas:/srv", "sftp:-oProxyCommand=x@nas:/srv", "sftp:u@-host:/srv", "sftp:u@host:",
		"sftp://u@host:99999//x", "sftp:u@host:/x -o sftp.command=sh",
		"rest:ftp://host/x", "rest:http:///x", "s3:bucket", "s3:http://host",
		"/srv/restic\n", "/srv/x\x00",
	} {
		if got, err := ParseRepository(s); err == nil || fault.KindOf(err) != fault.Invalid {
			t.Errorf("ParseRepository(%q) = %q, %v; want a 400", s, got, err)
		}
	}
}

func TestCheckFlagsLetsOnlyTheSafeOptionsThrough(t *testing.T) {
	got, err := CheckFlags([]string{"--limit-upload 1000", "--limit-download=500", "-o s3.storage-class=STANDARD_IA",
		"--option=rest.connections=4", "--compression max", "--insecure-tls", "--pack-size 32"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"--limit-upload=1000", "--limit-download=500", "-o", "s3.storage-class=STANDARD_IA",
		"-o", "rest.connections=4", "--compression=max", "--insecure-tls", "--pack-size=32"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CheckFlags (-want +got):\n%s", diff)
	}
	for _, f := range []string{
		"--password-command cat /etc/shadow", "--password-file /etc/shadow", "--repository-file /x", "--cache-dir /srv",
		"-o sftp.command=sh -c id", "--option sftp.command=sh", "-o s3.storage-class", "--key-hint x", "--tls-client-cert /k",
		"--cacert /etc/x", "-r /other", "--repo=/other", "--limit-upload", "--limit-upload -1", "--limit-upload x",
		"--compression fast", "--insecure-tls=false", "--no-lock", "-v", "--json", "", "-o rest.connections=4 --no-lock",
	} {
		if got, err := CheckFlags([]string{f}); err == nil || fault.KindOf(err) != fault.Invalid {
			t.Errorf("CheckFlags(%q) = %q, %v; want a 400", f, got, err)
		}
	}
}

func TestCheckRepoRefusesUnknownEnvironmentAndMissingKeys(t *testing.T) {
	ok := Repo{Repository: "s3:https://s3.example/b", Password: "p", Env: map[string]string{"AWS_ACCESS_KEY_ID": "a"}}
	if err := CheckRepo(ok); err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]Repo{
		"no password":      {Repository: "/srv/r"},
		"env not allowed":  {Repository: "/srv/r", Password: "p", Env: map[string]string{"LD_PRELOAD": "/x.so"}},
		"env line break":   {Repository: "/srv/r", Password: "p", Env: map[string]string{"AWS_ACCESS_KEY_ID": "a\nLD_PRELOAD=x"}},
		"sftp without key": {Repository: "sftp:u@h:/r", Password: "p"},
		"wrong type":       {Type: TypeREST, Repository: "/srv/r", Password: "p"},
		"bad flag":         {Repository: "/srv/r", Password: "p", Flags: []string{"--cache-dir /x"}},
	} {
		if err := CheckRepo(r); fault.KindOf(err) != fault.Invalid {
			t.Errorf("%s: CheckRepo = %v, want a 400", name, err)
		}
	}
}

// TestSecretsGoInFilesNeverInArguments: restic's arguments name the
// secret files only; the password, the REST credentials, the SSH key and
// the S3 keys are in the files.
func TestSecretsGoInFilesNeverInArguments(t *testing.T) {
	for _, r := range []Repo{
		{Type: TypeREST, Repository: "rest:http://u:rest-secret@h:8000/r/", Password: "repo-secret"},
		{Type: TypeREST, Repository: "rest:http://h:8000/r/", Password: "repo-secret",
			Env: map[string]string{"RESTIC_REST_USERNAME": "u", "RESTIC_REST_PASSWORD": "rest-secret"}},
		{Type: TypeSFTP, Repository: "sftp://u@h:2222//r", Password: "repo-secret", SSHKey: "key-secret"},
		{Type: TypeS3, Repository: "s3:https://h/b", Password: "repo-secret",
			Env: map[string]string{"AWS_ACCESS_KEY_ID": "id", "AWS_SECRET_ACCESS_KEY": "aws-secret"}},
	} {
		args, files, err := resticArgs(r, []string{"snapshots"})
		if err != nil {
			t.Fatal(err)
		}
		joined := strings.Join(args, " ")
		for _, s := range []string{"repo-secret", "rest-secret", "key-secret", "aws-secret"} {
			if strings.Contains(joined, s) {
				t.Errorf("%s: the arguments show %s: %s", r.Repository, s, joined)
			}
		}
		var all strings.Builder
		for _, v := range files {
			all.WriteString(v)
		}
		if !strings.Contains(all.String(), "repo-secret") {
			t.Errorf("%s: the password is in no file", r.Repository)
		}
		if strings.Contains(r.Repository+r.Env["RESTIC_REST_PASSWORD"], "rest-secret") && !strings.Contains(files[secretsDir+"/repository"], "rest-secret") {
			t.Errorf("%s: the REST credentials are not in the repository file: %q", r.Repository, files[secretsDir+"/repository"])
		}
	}
}

// TestBackupImageHoldsResticSSHAndTheirLibraries builds the image's files
// from this host's restic and ssh: the programs, the interpreter and the
// libraries they load, the CA bundle, passwd and berth-helper.
func TestBackupImageHoldsResticSSHAndTheirLibraries(t *testing.T) {
	restic, ssh := lookPrograms(os.Getenv("BERTH_TEST_RESTIC"))
	if restic == "" || ssh == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("restic or ssh is not installed (run scripts/test-env.sh)")
		}
		t.Skip("restic or ssh is not installed (run scripts/test-env.sh)")
	}
	files, err := imageFiles(restic, ssh, []byte("helper"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, f.Name)
	}
	for _, want := range []string{"usr/bin/restic", "usr/bin/ssh", "berth-helper", "etc/passwd", "etc/group", "tmp/", "root/",
		"etc/ssl/certs/ca-certificates.crt"} {
		if !slices.Contains(names, want) {
			t.Errorf("the image lacks %s: %v", want, names)
		}
	}
	libs, err := sharedLibraries(ssh)
	if err != nil {
		t.Fatal(err)
	}
	if len(libs) < 2 {
		t.Fatalf("ssh needs %v: want at least an interpreter and libc", libs)
	}
	for _, l := range libs {
		if !slices.Contains(names, l[1:]) {
			t.Errorf("the image lacks ssh's %s", l)
		}
	}
	if !slices.IsSorted(names) {
		t.Errorf("the layer is not in order (a directory before what it holds): %v", names)
	}
}

func FuzzParseRepository(f *testing.F) {
	for _, s := range []string{"/srv/r", "sftp:u@h:/r", "sftp://u@h:22//r", "rest:http://h/r", "s3:h/b", "rclone:x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		typ, err := ParseRepository(s)
		if err != nil {
			return
		}
		if strings.Contains(strings.ToLower(s), "sftp.command") || strings.HasPrefix(s, "rclone:") || strings.ContainsAny(s, "\n\x00") {
			t.Errorf("ParseRepository(%q) = %s, accepted", s, typ)
		}
		if typ == TypeSFTP {
			tg, err := parseSFTP(s)
			if err != nil || strings.HasPrefix(tg.User, "-") || strings.HasPrefix(tg.Host, "-") || strings.ContainsAny(tg.User+tg.Host, " ") {
				t.Errorf("sftp %q parsed to %+v, %v", s, tg, err)
			}
		}
	})
}

func FuzzCheckFlags(f *testing.F) {
	for _, s := range []string{"--limit-upload 10", "-o s3.region=x", "--compression=max", "--insecure-tls"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		args, err := CheckFlags([]string{s})
		if err != nil {
			return
		}
		for _, a := range args {
			for _, bad := range []string{"command", "password", "cache-dir", "repo", "cacert", "tls-client-cert"} {
				if strings.Contains(a, bad) {
					t.Errorf("CheckFlags(%q) let %q through", s, a)
				}
			}
		}
	})
}

func TestAnEngineOfAnotherArchitectureIsRefused(t *testing.T) {
	err := sameArch("arm64", "amd64")
	if f, ok := fault.As(err); !ok || f.Kind != fault.Invalid ||
		f.Message != "Backups need an engine of the Berth host's architecture (amd64); this engine's is arm64" {
		t.Errorf("sameArch = %v", err)
	}
	if err := sameArch("amd64", "amd64"); err != nil {
		t.Errorf("the same architecture: %v", err)
	}
}
