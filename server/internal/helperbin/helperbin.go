// Package helperbin is berth-helper, the one program of the image Berth's
// helper containers run (package helperimage): it lists and reads a volume
// mounted in the helper without following a symbolic link out of it, copies
// one volume into another, and idles while a browse helper is kept. In the
// backup image (package backup) it empties a restore's targets and starts
// restic with the environment of a file. It uses
// the standard library only, so that it builds as one static binary.
//
// Its answers are JSON on the standard output; Berth parses them as
// untrusted (a volume's names and links are anyone's).
package helperbin

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"strconv"
	"syscall"
)

// Status is the outcome of a list or read, as Berth maps it to a status.
type Status string

// The statuses of a list or read.
const (
	OK           Status = "ok"
	NotFound     Status = "not-found"     // the path, or one of its directories, does not exist
	NotDirectory Status = "not-directory" // list of a file
	IsDirectory  Status = "is-directory"  // read of a directory
	NotRegular   Status = "not-regular"   // read of a device, pipe or socket
	TooLarge     Status = "too-large"     // read of a file over the limit
	Escapes      Status = "escapes"       // a symbolic link on the way leads out of the volume
	TooManyLinks Status = "too-many-links"
)

// Entry is one entry of a listed directory: a link is not followed.
type Entry struct {
	Name  string      `json:"name"`
	Mode  fs.FileMode `json:"mode"`
	Size  int64       `json:"size"`
	MTime int64       `json:"mtime"` // Unix seconds
	Link  string      `json:"link,omitempty"`
}

// Listing is the answer of list.
type Listing struct {
	Status  Status  `json:"status"`
	Entries []Entry `json:"entries,omitempty"`
}

// Resolved is the answer of resolve.
type Resolved struct {
	Status Status `json:"status"`
	Path   string `json:"path,omitempty"` // relative to the root, "." for it
	Dir    bool   `json:"dir,omitempty"`
}

// FileHeader is the first line of the answer of read; with OK the file's
// bytes follow it.
type FileHeader struct {
	Status Status `json:"status"`
	Size   int64  `json:"size,omitempty"`
	MTime  int64  `json:"mtime,omitempty"`
}

// Usage is what berth-helper prints when its arguments are wrong.
const Usage = `usage:
  berth-helper idle                   wait until stopped
  berth-helper list ROOT PATH         list the directory PATH of ROOT as JSON
  berth-helper resolve ROOT PATH      print where PATH of ROOT leads (links followed inside ROOT only) as JSON
  berth-helper read ROOT PATH LIMIT   print a JSON header line, then the file PATH of ROOT (at most LIMIT bytes)
  berth-helper copy FROM TO           copy everything under FROM into TO, keeping owners, modes and times
  berth-helper empty DIR...            remove everything in each DIR (links are not followed)
  berth-helper exec ENVFILE OUT PROGRAM ARG...
                                      run PROGRAM in place of berth-helper with the KEY=VALUE lines of ENVFILE
                                      (removed once read; - for none) as environment, its output to OUT (- for stdout)
`

// Main runs berth-helper with args (without the program name) and returns
// its exit status.
func Main(args []string, stdout, stderr io.Writer) int {
	err := run(args, stdout)
	if errors.Is(err, errUsage) {
		fmt.Fprint(stderr, Usage)
		return 2
	}
	if err != nil {
		fmt.Fprintln(stderr, "berth-helper:", err)
		return 1
	}
	return 0
}

var errUsage = errors.New("usage")

func run(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return errUsage
	}
	switch cmd, args := args[0], args[1:]; {
	case cmd == "idle" && len(args) == 0:
		idle()
		return nil
	case cmd == "list" && len(args) == 2:
		l, err := List(args[0], args[1])
		if err != nil {
			return err
		}
		return json.NewEncoder(stdout).Encode(l)
	case cmd == "resolve" && len(args) == 2:
		res, err := Resolve(args[0], args[1])
		if err != nil {
			return err
		}
		return json.NewEncoder(stdout).Encode(res)
	case cmd == "read" && len(args) == 3:
		limit, err := strconv.ParseInt(args[2], 10, 64)
		if err != nil || limit < 0 {
			return errUsage
		}
		return Read(args[0], args[1], limit, stdout)
	case cmd == "copy" && len(args) == 2:
		return Copy(args[0], args[1])
	case cmd == "empty" && len(args) >= 1:
		return Empty(args)
	case cmd == "exec" && len(args) >= 3:
		return Exec(args[0], args[1], args[2], args[3:])
	}
	return errUsage
}

// idle waits for SIGTERM or SIGINT (as PID 1 of a container, a signal
// without a handler would be ignored).
func idle() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
	<-ch
}
