package backup

import (
	"archive/tar"
	"bytes"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/berth-dev/berth/shared/fault"
)

// restic's command line and secret files for a run, and its failures in the
// user's terms.

// resticArgs returns restic's arguments for args on r, and the secret
// files the helper gets (by path in the container).
func resticArgs(r Repo, args []string) ([]string, map[string]string, error) {
	flags, err := CheckFlags(r.Flags)
	if err != nil {
		return nil, nil, err
	}
	files := map[string]string{
		secretsDir + "/password": r.Password,
	}
	repository := r.Repository
	global := []string{"--no-cache", "--repository-file", secretsDir + "/repository", "--password-file", secretsDir + "/password"}
	var env strings.Builder
	env.WriteString("RESTIC_PROGRESS_FPS=1\n")
	for _, k := range AllowedEnv {
		if v, ok := r.Env[k]; ok && strings.HasPrefix(k, "AWS_") {
			env.WriteString(k + "=" + v + "\n")
		}
	}
	switch r.Type {
	case TypeLocal:
		repository = RepoDir
	case TypeREST:
		if user, ok := r.Env["RESTIC_REST_USERNAME"]; ok {
			u, err := url.Parse(strings.TrimPrefix(repository, "rest:"))
			if err != nil {
				return nil, nil, fault.Invalidf("The REST repository URL is not valid")
			}
			u.User = url.UserPassword(user, r.Env["RESTIC_REST_PASSWORD"])
			repository = "rest:" + u.String()
		}
	case TypeSFTP:
		t, err := parseSFTP(repository)
		if err != nil {
			return nil, nil, err
		}
		key := r.SSHKey
		if !strings.HasSuffix(key, "\n") {
			key += "\n"
		}
		files[secretsDir+"/ssh/key"] = key
		hosts := "-o UserKnownHostsFile=/tmp/known_hosts -o StrictHostKeyChecking=accept-new"
		if r.SSHKnownHosts != "" {
			files[secretsDir+"/ssh/known_hosts"] = r.SSHKnownHosts + "\n"
			hosts = "-o UserKnownHostsFile=" + secretsDir + "/ssh/known_hosts -o StrictHostKeyChecking=yes"
		}
		port := ""
		if t.Port != 0 {
			port = " -p " + strconv.Itoa(t.Port)
		}
		// ssh's errors go to sshLog, read when restic failed: through
		// restic's standard error they may be lost (restic can end before
		// it copies them).
		global = append(global, "-o", "sftp.command="+SSHPath+" -F /dev/null -E "+sshLog+" -i "+secretsDir+"/ssh/key -o IdentitiesOnly=yes"+
			" -o BatchMode=yes -o ServerAliveInterval=30 "+hosts+port+" "+t.User+"@"+t.Host+" -s sftp")
	}
	files[secretsDir+"/repository"] = repository + "\n"
	files[secretsDir+"/env"] = env.String()
	return append(append(global, flags...), args...), files, nil
}

// tarOfSecrets packs files (by absolute path, under secretsDir) for
// CopyTo into /: readable by root only.
func tarOfSecrets(files map[string]string) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := []string{secretsDir + "/"}
	for p := range files {
		if strings.HasPrefix(p, secretsDir+"/ssh/") && !slices.Contains(dirs, secretsDir+"/ssh/") {
			dirs = append(dirs, secretsDir+"/ssh/")
		}
	}
	for _, d := range dirs {
		if err := tw.WriteHeader(&tar.Header{Name: d[1:], Typeflag: tar.TypeDir, Mode: 0o700, ModTime: time.Unix(0, 0)}); err != nil {
			return nil, err
		}
	}
	names := sortedKeys(files)
	for _, p := range names {
		data := files[p]
		if err := tw.WriteHeader(&tar.Header{Name: p[1:], Typeflag: tar.TypeReg, Mode: 0o600, Size: int64(len(data)), ModTime: time.Unix(0, 0)}); err != nil {
			return nil, err
		}
		if _, err := tw.Write([]byte(data)); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// resticError maps how restic failed (its exit code, the end of its
// standard error) to a fault in the user's terms. Secrets restic may
// print (a URL's password) are removed from the detail.
func resticError(r Repo, code int64, stderr []string) error {
	all := strings.Join(stderr, "\n")
	lower := strings.ToLower(all)
	detail := redact(r, lastFatal(stderr))
	cause := fmt.Errorf("restic exited with %d: %s", code, redact(r, all))
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(lower, s) {
				return true
			}
		}
		return false
	}
	switch {
	case has("wrong password or no key found"):
		return fault.Wrap(fault.Invalid, "Wrong repository password", cause)
	case has("repository is already locked", "unable to create lock in backend"):
		return fault.Wrap(fault.Conflict, "Repository is locked by another run", cause)
	case has("no space left on device", "disk quota exceeded", "insufficient storage"):
		return fault.Wrap(fault.Unavailable, "No space left on the repository's device", cause)
	case has("host key verification failed", "remote host identification has changed"):
		return fault.Wrap(fault.Invalid, "The SFTP server's host key does not match the known hosts given", cause)
	case has("permission denied (publickey", "permission denied ("):
		return fault.Wrap(fault.Invalid, "The SFTP server refused the SSH key", cause)
	case has("signature we calculated does not match", "access key id you provided does not exist", "invalidaccesskeyid",
		"signaturedoesnotmatch", "401 unauthorized", "(401)", "access denied", "accessdenied", "403 forbidden", "(403)"):
		return fault.Wrap(fault.Invalid, "The repository refused the credentials", cause)
	case has("is there a repository at the following location", "config file does not exist",
		"unable to open config file") && has("no such file", "not exist", "404", "nosuchkey", "not found"):
		return fault.Wrap(fault.NotFound, "Repository not initialized", cause)
	case has("connection refused", "no such host", "i/o timeout", "network is unreachable", "no route to host",
		"connection reset", "ssh: connect to host", "unable to start the sftp session", "server unexpectedly closed",
		"timeout awaiting", "tls: ", "x509: ", "could not resolve", "name resolution", "nosuchbucket",
		"the specified bucket does not exist", "giving up after"):
		return fault.Wrap(fault.Unavailable, "Repository unreachable: "+detail, cause)
	}
	if detail == "" {
		detail = fmt.Sprintf("exit status %d", code)
	}
	return fault.Wrap(fault.Internal, "restic failed: "+detail, cause)
}

// lastFatal returns restic's "Fatal: …" line (else its last line),
// shortened.
func lastFatal(lines []string) string {
	line := ""
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if strings.HasPrefix(l, "Fatal: ") {
			line = strings.TrimPrefix(l, "Fatal: ")
			break
		}
		if line == "" && l != "" {
			line = l
		}
	}
	if len(line) > 300 {
		line = line[:300] + "…"
	}
	return line
}

// redact removes r's secrets from s.
func redact(r Repo, s string) string {
	secrets := []string{r.Password}
	for k, v := range r.Env {
		if k != "AWS_DEFAULT_REGION" && k != "RESTIC_REST_USERNAME" {
			secrets = append(secrets, v)
		}
	}
	if u, err := url.Parse(strings.TrimPrefix(r.Repository, "rest:")); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok {
			secrets = append(secrets, p, url.PathEscape(p), url.QueryEscape(p))
		}
	}
	for _, sec := range secrets {
		if len(sec) >= 3 {
			s = strings.ReplaceAll(s, sec, "***")
		}
	}
	return s
}
