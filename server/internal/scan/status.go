package scan

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// Ways a usable scanner runs.
const (
	ViaBinary = "binary" // the scanner's binary on Berth's host
	ViaImage  = "image"  // the scanner's image as a container on the environment's engine
)

// Status tells whether one scanner can scan on an environment, and when it
// cannot, how to get it: its image from a configured registry (PullFrom) or
// its binary (the GRYPE_PATH / TRIVY_PATH setting).
type Status struct {
	Scanner string `json:"scanner"` // scanner_a or scanner_b
	Name    string `json:"name"`    // Grype or Trivy
	Usable  bool   `json:"usable"`
	Via     string `json:"via,omitempty"` // binary or image, when usable
	// Binary is the scanner's binary (configured or found on PATH; "" none),
	// BinaryProblem why it cannot run ("" when it can or there is none).
	Binary        string `json:"binary,omitempty"`
	BinaryProblem string `json:"binaryProblem,omitempty"`
	BinarySetting string `json:"binarySetting"` // the setting naming the binary
	Image         string `json:"image"`         // the scanner's image
	ImagePresent  bool   `json:"imagePresent"`  // on the environment's engine
	// PullFrom is a configured registry holding the image (when it is not
	// on the engine and no binary runs).
	PullFrom *PullSource `json:"pullFrom,omitempty"`
	// Reason says, when not usable, why and how to get the scanner.
	Reason string `json:"reason,omitempty"`
}

// PullSource is a configured registry that serves a scanner's image.
type PullSource struct {
	RegistryID   int64  `json:"registryId"`
	RegistryName string `json:"registryName"`
	Reference    string `json:"reference"` // what to pull: the registry's name of the image
}

// SourceFinder finds a configured registry serving image (nil when none).
type SourceFinder func(ctx context.Context, image string) (*PullSource, error)

// executable tells why a scanner binary cannot run ("" when it can).
func executable(path string) string {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return path + " does not exist"
	case err != nil:
		return err.Error()
	case fi.IsDir():
		return path + " is a directory"
	case fi.Mode().Perm()&0o111 == 0:
		return path + " is not executable"
	}
	return ""
}

// usableBinary is t's binary when it can run, else "".
func (t tool) usableBinary() string {
	if t.binary != "" && executable(t.binary) == "" {
		return t.binary
	}
	return ""
}

// Statuses tells, for each scanner (scanner_a first), whether it can scan
// on env; find (nil: none) looks for a registry serving a missing image.
func (s *Service) Statuses(ctx context.Context, env store.Environment, find SourceFinder) ([]Status, error) {
	c, err := s.engines.Client(ctx, env.Endpoint())
	if err != nil {
		if engine.IsOffline(err) {
			return nil, fault.Wrap(fault.Unavailable, "Environment is offline", err)
		}
		return nil, err
	}
	names := make([]string, 0, len(s.tools))
	for n := range s.tools {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]Status, 0, len(names))
	for _, n := range names {
		t := s.tools[n]
		st := Status{Scanner: n, Name: t.label, Binary: t.binary, Image: t.image, BinarySetting: binarySetting(n)}
		if t.binary != "" {
			st.BinaryProblem = executable(t.binary)
		}
		if _, err := c.InspectImage(ctx, t.image); err == nil {
			st.ImagePresent = true
		} else if !errors.Is(err, engine.ErrNotFound) {
			return nil, err
		}
		switch {
		case t.binary != "" && st.BinaryProblem == "":
			st.Usable, st.Via = true, ViaBinary
		case st.ImagePresent:
			st.Usable, st.Via = true, ViaImage
		default:
			if find != nil {
				src, err := find(ctx, t.image)
				if err != nil {
					return nil, err
				}
				st.PullFrom = src
			}
			st.Reason = missingReason(st)
		}
		out = append(out, st)
	}
	return out, nil
}

// missingReason says why a scanner cannot scan and how to get it.
func missingReason(st Status) string {
	how := fmt.Sprintf("set %s to its binary", st.BinarySetting)
	if st.PullFrom != nil {
		how = fmt.Sprintf("pull its image from %s, or %s", st.PullFrom.RegistryName, how)
	} else {
		how = fmt.Sprintf("%s, or add a registry serving %s", how, st.Image)
	}
	if st.BinaryProblem != "" {
		return fmt.Sprintf("%s cannot run: %s; its image %s is not on this environment. To scan, %s.", st.Name, st.BinaryProblem, st.Image, how)
	}
	return fmt.Sprintf("%s is not installed and its image %s is not on this environment. To scan, %s.", st.Name, st.Image, how)
}

// binarySetting is the configuration naming a scanner's binary.
func binarySetting(scanner string) string {
	if scanner == ScannerB {
		return "TRIVY_PATH"
	}
	return "GRYPE_PATH"
}

// Image is the image of a scanner (scanner_a or scanner_b).
func (s *Service) Image(scanner string) (string, error) {
	t, ok := s.tools[scanner]
	if !ok {
		return "", fault.New(fault.Invalid, "scanner must be scanner_a or scanner_b")
	}
	return t.image, nil
}

// Choose is the one rule for the scanners a scan on env runs with (the
// console's scanChoice follows it too, so that what it offers is what runs):
//   - a requested scanner (scanner_a or grype, scanner_b or trivy, or both)
//     must be able to run, else an Invalid fault (400) says why and how to
//     get it — before any job starts;
//   - without one, the scanners the environment's setting names (both when it
//     is none or both) that can run; when none of them can, the other one if
//     it can; when no scanner can run, an Invalid fault saying why.
//
// find (nil: none) names the registry serving a missing scanner's image in
// the refusal.
func (s *Service) Choose(ctx context.Context, env store.Environment, requested string, find SourceFinder) ([]string, error) {
	wanted, explicit := []string{ScannerA, ScannerB}, requested != ""
	switch requested {
	case "":
		setting, err := s.Setting(ctx, env.ID)
		if err != nil {
			return nil, err
		}
		if setting == ScannerA || setting == ScannerB {
			wanted = []string{setting}
		}
	case ScannerA, "grype":
		wanted = []string{ScannerA}
	case ScannerB, "trivy":
		wanted = []string{ScannerB}
	case SettingBoth:
	default:
		return nil, fault.New(fault.Invalid, "scanner must be scanner_a, scanner_b or both")
	}
	list, err := s.Statuses(ctx, env, nil)
	if err != nil {
		return nil, err
	}
	names, err := choose(wanted, explicit, list)
	if err != nil && find != nil {
		// Said again with where to get the missing scanners.
		if named, ferr := s.Statuses(ctx, env, find); ferr == nil {
			_, err = choose(wanted, explicit, named)
		}
	}
	return names, err
}

// choose applies Choose's rule to the scanners' statuses.
func choose(wanted []string, explicit bool, list []Status) ([]string, error) {
	var runs, reasons []string
	for _, w := range wanted {
		for _, st := range list {
			if st.Scanner != w {
				continue
			}
			if st.Usable {
				runs = append(runs, w)
			} else {
				reasons = append(reasons, st.Reason)
			}
		}
	}
	switch {
	case explicit && len(runs) < len(wanted):
		return nil, fault.New(fault.Invalid, strings.Join(reasons, " "))
	case len(runs) > 0:
		return runs, nil
	}
	for _, st := range list {
		if st.Usable {
			return []string{st.Scanner}, nil
		}
	}
	var all []string
	for _, st := range list {
		all = append(all, st.Reason)
	}
	return nil, fault.New(fault.Invalid, "No vulnerability scanner can run on this environment. "+strings.Join(all, " "))
}
