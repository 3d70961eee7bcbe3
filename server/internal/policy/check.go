package policy

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/berth-dev/berth/shared/fault"
)

// Workload is what one container (or one compose service) asks of the host.
type Workload struct {
	// Service names the compose service; "" for a container created alone.
	Service     string
	Binds       []string // host paths mounted into it (bind mounts, volumes of host devices or directories, file secrets)
	Privileged  bool
	NetworkMode string
	PIDMode     string
	IPCMode     string
	Devices     []string // host devices and device cgroup rules
	CapAdd      []string
	SecurityOpt []string
	// OwnDir is the directory of a stack's compose file: whenever bind mounts
	// are allowed, paths inside it may be bound (./data) whatever the list
	// of allowed directories and wherever it lies.
	OwnDir string
}

// Policy is what restricted callers may ask of one environment's host.
type Policy struct {
	Settings
	protected []string // host directories never bound, nor any directory holding them
	local     bool     // the host is Berth's own: symbolic links are resolved before a path is checked
}

// defaultCaps are the capabilities the engine grants every container:
// adding one of them changes nothing.
var defaultCaps = map[string]bool{"CHOWN": true, "DAC_OVERRIDE": true, "FSETID": true, "FOWNER": true, "MKNOD": true,
	"NET_RAW": true, "SETGID": true, "SETUID": true, "SETFCAP": true, "SETPCAP": true, "NET_BIND_SERVICE": true,
	"SYS_CHROOT": true, "KILL": true, "AUDIT_WRITE": true}

// Check returns the 403 naming the first thing w asks for that p forbids,
// or nil.
func (p Policy) Check(w Workload) error {
	if w.Privileged && !p.AllowPrivileged {
		return refuse(w, "privileged mode", "privileged mode")
	}
	if isHost(w.NetworkMode) && !p.AllowHostNetwork {
		return refuse(w, "the host network", "host network")
	}
	if isHost(w.PIDMode) && !p.AllowHostPID {
		return refuse(w, "the host PID namespace", "host PID")
	}
	if isHost(w.IPCMode) && !p.AllowHostIPC {
		return refuse(w, "the host IPC namespace", "host IPC")
	}
	if len(w.Devices) > 0 && !p.AllowDevices {
		return refuse(w, "device "+w.Devices[0], "devices")
	}
	if !p.AllowCapAdd {
		for _, c := range w.CapAdd {
			name := strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(c)), "CAP_")
			if !defaultCaps[name] {
				return refuse(w, "added capability "+c, "added capabilities")
			}
		}
	}
	if !p.AllowSecurityOpt {
		for _, o := range w.SecurityOpt {
			if !tightening(o) {
				return refuse(w, "security option "+o, "security options")
			}
		}
	}
	for _, b := range w.Binds {
		if err := p.checkBind(w, b); err != nil {
			return err
		}
	}
	return nil
}

// checkBind checks one host path, as written and, on Berth's own host, as
// the engine will find it after following symbolic links.
func (p Policy) checkBind(w Workload, src string) error {
	host := cleanHost(src)
	what := "bind mount of " + host
	if !p.AllowBindMounts {
		return refuse(w, what, "bind mounts")
	}
	real, own, realOwn := host, "", ""
	if w.OwnDir != "" {
		own = cleanHost(w.OwnDir)
		realOwn = own
	}
	if p.local {
		real = resolve(host)
		if own != "" {
			realOwn = resolve(own)
		}
	}
	if own != "" && within(host, own) && within(real, realOwn) {
		return nil // the stack's own directory, links followed included
	}
	for _, h := range []string{host, real} {
		for _, d := range p.protected {
			if within(h, d) || within(d, h) {
				return fault.New(fault.Forbidden, prefix(w, what+" is not allowed on this environment (Berth's data directory is never bound by non-administrators)"))
			}
		}
		if len(p.AllowedBindPaths) > 0 && !p.allowedPath(h) {
			return refuse(w, what, "allowed bind paths")
		}
	}
	return nil
}

// allowedPath reports whether host lies in one of the allowed directories.
func (p Policy) allowedPath(host string) bool {
	for _, a := range p.AllowedBindPaths {
		if within(host, a) || p.local && within(host, resolve(a)) {
			return true
		}
	}
	return false
}

// refuse is the 403 of what w asks for, naming the setting that forbids it.
func refuse(w Workload, what, setting string) error {
	return fault.New(fault.Forbidden, prefix(w, what+` is not allowed on this environment (security setting "`+setting+`")`))
}

// prefix names w's service before msg, or capitalises msg for a container.
func prefix(w Workload, msg string) string {
	if w.Service != "" {
		return `Service "` + w.Service + `": ` + msg
	}
	return strings.ToUpper(msg[:1]) + msg[1:]
}

func isHost(mode string) bool { return strings.EqualFold(strings.TrimSpace(mode), "host") }

// tightening reports whether a security option only restricts the
// container (no-new-privileges), which is never refused.
func tightening(opt string) bool {
	o := strings.ToLower(strings.TrimSpace(opt))
	return o == "no-new-privileges" || o == "no-new-privileges:true" || o == "no-new-privileges=true"
}

// cleanHost is the host path src names, cleaned: ".." cannot climb out of
// a directory it names.
func cleanHost(src string) string {
	if !strings.HasPrefix(src, "/") {
		src = "/" + src
	}
	return filepath.Clean(src)
}

// within reports whether p is dir or lies inside it.
func within(p, dir string) bool {
	if dir == "/" {
		return true
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// resolve follows the symbolic links of the longest part of p that exists
// on this host; the rest, which does not exist yet, holds none.
func resolve(p string) string {
	rest := ""
	for cur := p; ; cur = filepath.Dir(cur) {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(real, rest)
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, os.ErrPermission) || cur == "/" {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
	}
}

// HostDevice returns the host path a volume of driver with opts mounts,
// when it mounts one: the local driver's "device" of a bind (o=bind) or of
// a host filesystem (type ext4, …), which is a bind mount in disguise.
// Network filesystems and tmpfs mount nothing of the host's.
func HostDevice(driver string, opts map[string]string) (string, bool) {
	if driver != "" && driver != "local" {
		return "", false
	}
	dev := strings.TrimSpace(opts["device"])
	if dev == "" {
		return "", false
	}
	switch strings.ToLower(strings.TrimSpace(opts["type"])) {
	case "nfs", "nfs4", "cifs", "smb", "smb3", "tmpfs":
		if !strings.Contains(","+strings.ToLower(opts["o"])+",", ",bind,") {
			return "", false
		}
	}
	return dev, true
}
