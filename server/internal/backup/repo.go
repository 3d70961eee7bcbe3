package backup

import (
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/berth-dev/berth/shared/fault"
)

// AllowedEnv are the names Repo.Env may hold: the credentials and region of
// an S3 repository, the user and password of a REST one (put in its URL:
// restic 0.14 does not read them).
var AllowedEnv = []string{
	"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_DEFAULT_REGION",
	"RESTIC_REST_USERNAME", "RESTIC_REST_PASSWORD",
}

// ParseRepository returns the type of the restic repository string s (an
// absolute host path, sftp:, rest: or s3:), refusing the others: rclone:
// runs a program, as does an sftp.command, and the cloud backends Berth
// does not offer.
func ParseRepository(s string) (string, error) {
	if strings.ContainsAny(s, "\x00\n\r") || strings.TrimSpace(s) != s || s == "" {
		return "", fault.Invalidf("The repository %q is not a valid restic repository", s)
	}
	if strings.Contains(strings.ToLower(s), "sftp.command") {
		return "", fault.Invalidf("A repository cannot set sftp.command")
	}
	switch {
	case strings.HasPrefix(s, "/"):
		if path.Clean(s) != s || s == "/" || strings.ContainsAny(s, ":,") {
			return "", fault.Invalidf("A local repository is a clean absolute path of the host other than / (without : or ,): %q", s)
		}
		return TypeLocal, nil
	case strings.HasPrefix(s, "sftp:"):
		if _, err := parseSFTP(s); err != nil {
			return "", err
		}
		return TypeSFTP, nil
	case strings.HasPrefix(s, "rest:"):
		u, err := url.Parse(strings.TrimPrefix(s, "rest:"))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return "", fault.Invalidf("A REST repository is rest:http(s)://[user:pass@]host:port/path")
		}
		return TypeREST, nil
	case strings.HasPrefix(s, "s3:"):
		rest := strings.TrimPrefix(s, "s3:")
		if u, err := url.Parse(rest); strings.Contains(rest, "://") && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.Trim(u.Path, "/") == "") {
			return "", fault.Invalidf("An S3 repository is s3:http(s)://host:port/bucket[/path] or s3:host/bucket[/path]")
		}
		if !strings.Contains(rest, "://") && !strings.Contains(strings.Trim(rest, "/"), "/") {
			return "", fault.Invalidf("An S3 repository is s3:http(s)://host:port/bucket[/path] or s3:host/bucket[/path]")
		}
		return TypeS3, nil
	case strings.HasPrefix(s, "rclone:"):
		return "", fault.Invalidf("rclone: repositories are not supported (restic would run rclone)")
	}
	scheme, _, _ := strings.Cut(s, ":")
	return "", fault.Invalidf("Unsupported repository type %q: use a host path, sftp:, rest: or s3:", scheme)
}

// sftpTarget is where an sftp repository lives.
type sftpTarget struct {
	User, Host string
	Port       int // 0: ssh's default
	Path       string
}

// parseSFTP reads sftp:user@host:/path and sftp://user@host[:port]//path
// (restic's two forms; a path without a leading slash is relative to the
// user's home).
func parseSFTP(s string) (sftpTarget, error) {
	bad := fault.Invalidf("An SFTP repository is sftp:user@host:/path or sftp://user@host:port//path")
	var t sftpTarget
	if strings.HasPrefix(s, "sftp://") {
		u, err := url.Parse(s)
		if err != nil || u.User == nil || u.Hostname() == "" {
			return t, bad
		}
		t.User, t.Host = u.User.Username(), u.Hostname()
		if p := u.Port(); p != "" {
			n, err := strconv.Atoi(p)
			if err != nil || n <= 0 || n > 65535 {
				return t, bad
			}
			t.Port = n
		}
		t.Path = strings.TrimPrefix(u.Path, "/")
	} else {
		rest := strings.TrimPrefix(s, "sftp:")
		userHost, p, ok := strings.Cut(rest, ":")
		user, host, ok2 := strings.Cut(userHost, "@")
		if !ok || !ok2 {
			return t, bad
		}
		t.User, t.Host, t.Path = user, host, p
	}
	// What restic passes to ssh must not read as an option.
	for _, v := range []string{t.User, t.Host} {
		if v == "" || strings.HasPrefix(v, "-") || strings.ContainsAny(v, " \t'\"\\@/") {
			return t, bad
		}
	}
	if t.Path == "" {
		return t, bad
	}
	return t, nil
}

// CheckRepo checks r: its repository string, its environment's names and
// its flags.
func CheckRepo(r Repo) error {
	typ, err := ParseRepository(r.Repository)
	if err != nil {
		return err
	}
	if r.Type != "" && r.Type != typ {
		return fault.Invalidf("The repository %q is of type %s, not %s", r.Repository, typ, r.Type)
	}
	if r.Password == "" {
		return fault.Invalidf("A repository password is required")
	}
	for k, v := range r.Env {
		if !slices.Contains(AllowedEnv, k) {
			return fault.Invalidf("The repository environment variable %s is not allowed (allowed: %s)", k, strings.Join(AllowedEnv, ", "))
		}
		if strings.ContainsAny(v, "\n\r\x00") {
			return fault.Invalidf("The repository environment variable %s holds a line break", k)
		}
	}
	if typ == TypeSFTP && r.SSHKey == "" {
		return fault.Invalidf("An SFTP repository needs an SSH private key")
	}
	_, err = CheckFlags(r.Flags)
	return err
}

// The flags CheckFlags lets through: restic's global options that change
// only how restic talks to the repository, and the backend options that
// read or run nothing else.
var (
	valueFlags = map[string]func(string) bool{
		"--limit-upload":   isUint,
		"--limit-download": isUint,
		"--pack-size":      isUint,
		"--compression":    func(v string) bool { return v == "auto" || v == "off" || v == "max" },
	}
	boolFlags = []string{"--insecure-tls"}
	// backendOptions are the -o keys allowed (restic 0.14's, but the
	// command ones).
	backendOptions = []string{
		"s3.storage-class", "s3.region", "s3.bucket-lookup", "s3.connections", "s3.list-objects-v1",
		"rest.connections", "sftp.connections", "local.connections",
	}
)

func isUint(v string) bool {
	n, err := strconv.ParseUint(v, 10, 32)
	return err == nil && n > 0
}

// CheckFlags checks restic options given by a user ("--limit-upload 1000",
// "--limit-upload=1000", "-o s3.storage-class=STANDARD_IA") against an
// allow-list, and returns them as restic arguments. Anything that could
// make restic read or write elsewhere, or run a program
// (--password-command, --cache-dir, -o sftp.command…), is refused.
func CheckFlags(flags []string) ([]string, error) {
	var args []string
	for _, f := range flags {
		f = strings.TrimSpace(f)
		name, value, hasValue := strings.Cut(f, "=")
		if i := strings.IndexAny(f, " \t"); i >= 0 && (!hasValue || i < len(name)) {
			name, value, hasValue = f[:i], strings.TrimSpace(f[i+1:]), true
		}
		switch {
		case name == "-o" || name == "--option":
			key, v, ok := strings.Cut(value, "=")
			if !hasValue || !ok || !slices.Contains(backendOptions, key) || strings.ContainsAny(v, " \t\n\x00") || v == "" {
				return nil, fault.Invalidf("The restic option %q is not allowed (allowed -o keys: %s)", f, strings.Join(backendOptions, ", "))
			}
			args = append(args, "-o", key+"="+v)
		case valueFlags[name] != nil:
			if !hasValue || !valueFlags[name](value) {
				return nil, fault.Invalidf("The restic option %s needs a valid value: %q", name, f)
			}
			args = append(args, name+"="+value)
		case slices.Contains(boolFlags, name) && !hasValue:
			args = append(args, name)
		default:
			return nil, fault.Invalidf("The restic option %q is not allowed (allowed: %s, %s, -o KEY=VALUE)", f,
				strings.Join(sortedKeys(valueFlags), ", "), strings.Join(boolFlags, ", "))
		}
	}
	return args, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// checkTag refuses a tag restic would split or misread.
func checkTag(tag string) error {
	if tag == "" || strings.ContainsAny(tag, ",\n\r\x00") || strings.HasPrefix(tag, "-") {
		return fault.Invalidf("The snapshot tag %q is not valid (no comma, no leading -)", tag)
	}
	return nil
}

// checkSnapshotID refuses what is not a snapshot id (hex, 8 to 64
// digits) or "latest".
func checkSnapshotID(id string) error {
	if id == "latest" {
		return nil
	}
	if len(id) < 8 || len(id) > 64 || strings.Trim(id, "0123456789abcdef") != "" {
		return fault.Invalidf("%q is not a snapshot id", id)
	}
	return nil
}

// checkSnapshotPath refuses what is not a clean absolute path of a
// snapshot.
func checkSnapshotPath(p string) error {
	if !path.IsAbs(p) || path.Clean(p) != p || strings.ContainsAny(p, "\x00\n") {
		return fault.Invalidf("%q is not a clean absolute path of a snapshot", p)
	}
	return nil
}

// sourcePath returns where the helper mounts the host path hostPath.
func sourcePath(hostPath string) string { return PathsDir + hostPath }

// checkHostPath refuses what is not a clean absolute host path other than /.
func checkHostPath(p string) error {
	if !path.IsAbs(p) || path.Clean(p) != p || p == "/" || strings.ContainsAny(p, ":,\x00\n") {
		return fault.Invalidf("%q is not a clean absolute host path (other than /, without : or ,)", p)
	}
	return nil
}

// checkVolumeName refuses what the engine would not take as a volume name.
func checkVolumeName(v string) error {
	if v == "" || len(v) > 255 || strings.ContainsAny(v, "/:\\\x00 ") || strings.HasPrefix(v, ".") || strings.HasPrefix(v, "-") {
		return fault.Invalidf("%q is not a volume name", v)
	}
	return nil
}
