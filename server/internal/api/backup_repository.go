package api

import (
	"context"
	"net/url"
	"path"
	"regexp"
	"strings"
	"unicode"

	"github.com/berth-dev/berth/server/internal/backup"
	"github.com/berth-dev/berth/server/internal/outbound"
	"github.com/berth-dev/berth/shared/fault"
)

// The checks of a destination's repository string, restic flags and extra
// environment. restic runs in a helper container with the host's network,
// so a repository is an outbound destination like a webhook's URL: its host
// follows the outbound policy (docs/security.md).

// resticRepository is a parsed repository string.
type resticRepository struct {
	Type string // backup.TypeLocal, TypeSFTP, TypeREST, TypeS3
	Host string // the host restic connects to ("" for a local path)
	// Path is a local repository's host path.
	Path string
}

// parseResticRepository checks a repository string and says what it names.
// Accepted: an absolute host path ("/srv/restic", "local:/srv/restic"),
// sftp:user@host:/path, sftp://user@host[:port]/path,
// rest:http(s)://[user[:password]@]host[:port]/path,
// s3:http(s)://host[:port]/bucket[/path] and s3:host/bucket[/path].
func parseResticRepository(repo string) (resticRepository, error) {
	if repo == "" {
		return resticRepository{}, fault.New(fault.Invalid, "Repository is required")
	}
	if strings.IndexFunc(repo, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return resticRepository{}, fault.New(fault.Invalid, "Invalid repository: it may not contain spaces or control characters")
	}
	kind, rest, hasPrefix := strings.Cut(repo, ":")
	if strings.HasPrefix(repo, "/") {
		kind, rest, hasPrefix = "local", repo, true
	}
	if !hasPrefix {
		return resticRepository{}, errUnsupportedRepository
	}
	switch kind {
	case "local":
		p := path.Clean(rest)
		if !strings.HasPrefix(rest, "/") || p == "/" || p != strings.TrimSuffix(rest, "/") {
			return resticRepository{}, fault.New(fault.Invalid,
				"Invalid repository: a local repository is an absolute, clean path other than / on the environment's host")
		}
		return resticRepository{Type: backup.TypeLocal, Path: p}, nil
	case "sftp":
		host, err := sftpHost(rest)
		if err != nil {
			return resticRepository{}, err
		}
		return resticRepository{Type: backup.TypeSFTP, Host: host}, nil
	case "rest":
		u, err := url.Parse(rest)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
			return resticRepository{}, fault.New(fault.Invalid, "Invalid repository: a REST repository is rest:http(s)://host:port/path")
		}
		return resticRepository{Type: backup.TypeREST, Host: u.Hostname()}, nil
	case "s3":
		host := ""
		if strings.Contains(rest, "://") {
			u, err := url.Parse(rest)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || strings.Trim(u.Path, "/") == "" {
				return resticRepository{}, fault.New(fault.Invalid, "Invalid repository: an S3 repository is s3:http(s)://host:port/bucket/path or s3:host/bucket/path")
			}
			host = u.Hostname()
		} else {
			h, bucket, _ := strings.Cut(rest, "/")
			if h == "" || strings.Trim(bucket, "/") == "" {
				return resticRepository{}, fault.New(fault.Invalid, "Invalid repository: an S3 repository is s3:http(s)://host:port/bucket/path or s3:host/bucket/path")
			}
			host = h
			if hh, _, ok := strings.Cut(h, ":"); ok {
				host = hh
			}
		}
		return resticRepository{Type: backup.TypeS3, Host: host}, nil
	}
	return resticRepository{}, errUnsupportedRepository
}

var errUnsupportedRepository = fault.New(fault.Invalid,
	"Unsupported repository: use a local path (/srv/restic), sftp:user@host:/path, rest:http(s)://host:port/path or s3:host/bucket/path")

// sftpHost is the host of an sftp repository (sftp:user@host:/path or
// sftp://user@host:port/path). A host that ssh would read as an option is
// refused.
func sftpHost(rest string) (string, error) {
	bad := fault.New(fault.Invalid, "Invalid repository: an SFTP repository is sftp:user@host:/path or sftp://user@host:port/path")
	var host string
	if strings.HasPrefix(rest, "//") {
		u, err := url.Parse("sftp:" + rest)
		if err != nil || u.Hostname() == "" || u.Path == "" {
			return "", bad
		}
		host = u.Hostname()
	} else {
		hostPart, p, ok := strings.Cut(rest, ":")
		if !ok || p == "" {
			return "", bad
		}
		if _, h, ok := strings.Cut(hostPart, "@"); ok {
			hostPart = h
		}
		host = hostPart
	}
	if host == "" || strings.HasPrefix(host, "-") || strings.ContainsAny(host, "@/\\'\"") {
		return "", bad
	}
	return host, nil
}

// checkRepositoryHost applies the outbound policy to a remote repository's
// host. A refusal is a 400 here (the reference's "SSRF-blocked repository"),
// with the policy's words.
func (s *Server) checkRepositoryHost(ctx context.Context, r resticRepository) error {
	if r.Host == "" {
		return nil
	}
	p, err := s.outbound.Policy(ctx)
	if err != nil {
		return err
	}
	if err := p.CheckHost(ctx, r.Host); err != nil {
		if f, ok := outbound.Refused(err); ok {
			return fault.New(fault.Invalid, "Repository refused: "+f.Message)
		}
		return err
	}
	return nil
}

// resticFlagRule is an allowed restic option: whether it takes a value, and
// the form of the value.
type resticFlagRule struct {
	value *regexp.Regexp // nil: a switch without value
}

var (
	flagNumber = regexp.MustCompile(`^[0-9]{1,9}$`)
	// allowedFlags are the restic options a destination may add: limits and
	// tuning of the connection, never one that reads or writes elsewhere
	// (--password-command, --cache-dir, --cacert, --tls-client-cert,
	// --repository-file…) or runs a program (-o sftp.command).
	allowedFlags = map[string]resticFlagRule{
		"--limit-upload":   {flagNumber},
		"--limit-download": {flagNumber},
		"--pack-size":      {flagNumber},
		"--compression":    {regexp.MustCompile(`^(auto|off|max)$`)},
		"--no-cache":       {},
		"--no-lock":        {},
		"--insecure-tls":   {},
		"--verbose":        {},
		"-v":               {},
		"--key-hint":       {regexp.MustCompile(`^[0-9a-f]{8,64}$`)},
		"-o":               {resticOption},
		"--option":         {resticOption},
	}
	// resticOption is the -o key=value of backend options that only tune
	// the connection.
	resticOption = regexp.MustCompile(`^(s3\.(storage-class|region|bucket-lookup|connections|list-objects-v1)|rest\.connections|sftp\.connections|local\.connections)=[A-Za-z0-9._-]{1,64}$`)
)

// checkResticFlags splits and checks a destination's extra restic options
// ("--limit-upload 1000 -o s3.storage-class=STANDARD_IA").
func checkResticFlags(flags string) error {
	fields := strings.Fields(flags)
	for i := 0; i < len(fields); i++ {
		name, value, inline := strings.Cut(fields[i], "=")
		rule, ok := allowedFlags[name]
		if !ok {
			return fault.Invalidf("Invalid restic flags: %s is not allowed (allowed: --limit-upload, --limit-download, --pack-size, "+
				"--compression, --no-cache, --no-lock, --insecure-tls, --verbose, --key-hint, -o with s3/rest/sftp connection options)", name)
		}
		if rule.value == nil {
			if inline {
				return fault.Invalidf("Invalid restic flags: %s takes no value", name)
			}
			continue
		}
		if !inline {
			if i+1 >= len(fields) {
				return fault.Invalidf("Invalid restic flags: %s needs a value", name)
			}
			i++
			value = fields[i]
		}
		if !rule.value.MatchString(value) {
			return fault.Invalidf("Invalid restic flags: %q is not a valid value of %s", value, name)
		}
	}
	return nil
}

// allowedEnvVars are the names a destination's extra restic environment
// may hold: the credentials of the repository types Berth supports.
var allowedEnvVars = map[string]bool{
	"AWS_ACCESS_KEY_ID": true, "AWS_SECRET_ACCESS_KEY": true, "AWS_SESSION_TOKEN": true,
	"AWS_DEFAULT_REGION": true, "RESTIC_REST_USERNAME": true, "RESTIC_REST_PASSWORD": true,
}

// checkEnvVars refuses names outside allowedEnvVars and values that could
// not be written as one line of an environment file.
func checkEnvVars(env map[string]string) error {
	for k, v := range env {
		if !allowedEnvVars[k] {
			return fault.Invalidf("Invalid envVars: %s is not allowed (allowed: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, "+
				"AWS_SESSION_TOKEN, AWS_DEFAULT_REGION, RESTIC_REST_USERNAME, RESTIC_REST_PASSWORD)", k)
		}
		if strings.IndexFunc(v, unicode.IsControl) >= 0 {
			return fault.Invalidf("Invalid envVars: the value of %s may not contain control characters", k)
		}
	}
	return nil
}
