package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// The replicas benchmark's balancer runs in a process of its own (this
// binary again, with balancerEnv set): it holds two descriptors per agent,
// the simulated agents one each, and together they pass the 20,000 open
// files a process may have on this machine at 5,000 agents (the runs of
// 2026-11-28 ran out: "accept4: too many open files"; the hard limit cannot
// be raised without CAP_SYS_RESOURCE).

// balancerEnv names the backends (comma-separated) of a balancer process.
const balancerEnv = "BERTH_BENCH_BALANCER"

// lbFigures is what the balancer process tells about itself.
type lbFigures struct {
	Active        []int64 // connections open to each backend
	AcceptErrs    int64   // failed accepts
	DialErrs      int64   // connections no backend accepted
	LastAcceptErr string
}

// balancerMain runs the balancer process: it prints its address, then,
// for each line read on stdin, its figures as one line of JSON, until stdin
// closes.
func balancerMain(backends string) int {
	b, err := newBalancer(strings.Split(backends, ","))
	if err != nil {
		fmt.Fprintln(os.Stderr, "balancer:", err)
		return 1
	}
	defer b.Close()
	fmt.Println(b.addr())
	in := bufio.NewScanner(os.Stdin)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		f := lbFigures{Active: make([]int64, len(b.active)), AcceptErrs: b.acceptErrs.Load(), DialErrs: b.dialErrs.Load()}
		for i := range b.active {
			f.Active[i] = b.active[i].Load()
		}
		f.LastAcceptErr, _ = b.lastAcceptErr.Load().(string)
		_ = out.Encode(f)
	}
	return 0
}

// lbProc is a balancer process seen from the bench.
type lbProc struct {
	cmd      *exec.Cmd
	in       io.WriteCloser
	out      *bufio.Reader
	address  string
	backends int
}

func startBalancer(backends []string) (*lbProc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), balancerEnv+"="+strings.Join(backends, ","))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &lbProc{cmd: cmd, in: in, out: bufio.NewReader(outPipe), backends: len(backends)}
	line, err := p.out.ReadString('\n')
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("balancer process: %w", err)
	}
	p.address = strings.TrimSpace(line)
	return p, nil
}

func (p *lbProc) addr() string { return p.address }

// figures asks the balancer for its figures.
func (p *lbProc) figures() (lbFigures, error) {
	var f lbFigures
	if _, err := io.WriteString(p.in, "?\n"); err != nil {
		return f, err
	}
	line, err := p.out.ReadBytes('\n')
	if err != nil {
		return f, err
	}
	if err := json.Unmarshal(line, &f); err != nil || len(f.Active) != p.backends {
		return f, fmt.Errorf("balancer process: unexpected figures %q (%v)", line, err)
	}
	return f, nil
}

// active returns the connections open to each backend (-1 each when the
// balancer cannot be asked).
func (p *lbProc) active() []int64 {
	f, err := p.figures()
	if err != nil {
		f.Active = make([]int64, p.backends)
		for i := range f.Active {
			f.Active[i] = -1
		}
	}
	return f.Active
}

// print prints the balancer's failed accepts and dials, if any.
func (p *lbProc) print(out io.Writer) {
	f, err := p.figures()
	switch {
	case err != nil:
		fmt.Fprintf(out, "  the balancer cannot be asked: %v\n", err)
		return
	case f.AcceptErrs > 0:
		fmt.Fprintf(out, "  the balancer failed to accept %d connections (last: %s)\n", f.AcceptErrs, f.LastAcceptErr)
	}
	if f.DialErrs > 0 {
		fmt.Fprintf(out, "  the balancer failed %d dials to a replica\n", f.DialErrs)
	}
}

// Close ends the balancer process and every connection it relays.
func (p *lbProc) Close() {
	p.in.Close()
	_ = p.cmd.Wait()
}
