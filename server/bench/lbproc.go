package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
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

// balancerMain runs the balancer process: it prints its address, then,
// for each line read on stdin, one line of figures (connections open to
// each backend, failed accepts, failed dials, the last accept error) until
// stdin closes.
func balancerMain(backends string) int {
	b, err := newBalancer(strings.Split(backends, ","))
	if err != nil {
		fmt.Fprintln(os.Stderr, "balancer:", err)
		return 1
	}
	defer b.Close()
	fmt.Println(b.addr())
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		fields := make([]string, 0, len(b.active)+3)
		for i := range b.active {
			fields = append(fields, strconv.FormatInt(b.active[i].Load(), 10))
		}
		last, _ := b.lastAcceptErr.Load().(string)
		fields = append(fields, strconv.FormatInt(b.acceptErrs.Load(), 10), strconv.FormatInt(b.dialErrs.Load(), 10),
			strconv.Quote(last))
		fmt.Println(strings.Join(fields, " "))
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
func (p *lbProc) figures() (active []int64, acceptErrs, dialErrs int64, lastAcceptErr string, err error) {
	if _, err := io.WriteString(p.in, "?\n"); err != nil {
		return nil, 0, 0, "", err
	}
	line, err := p.out.ReadString('\n')
	if err != nil {
		return nil, 0, 0, "", err
	}
	head, quoted, _ := strings.Cut(strings.TrimSpace(line), ` "`)
	f := strings.Fields(head)
	if len(f) != p.backends+2 {
		return nil, 0, 0, "", errors.New("balancer process: unexpected figures " + line)
	}
	nums := make([]int64, len(f))
	for i, s := range f {
		if nums[i], err = strconv.ParseInt(s, 10, 64); err != nil {
			return nil, 0, 0, "", err
		}
	}
	lastAcceptErr, _ = strconv.Unquote(`"` + quoted)
	return nums[:p.backends], nums[p.backends], nums[p.backends+1], lastAcceptErr, nil
}

// active returns the connections open to each backend (-1 each when the
// balancer cannot be asked).
func (p *lbProc) active() []int64 {
	a, _, _, _, err := p.figures()
	if err != nil {
		a = make([]int64, p.backends)
		for i := range a {
			a[i] = -1
		}
	}
	return a
}

// print prints the balancer's failed accepts and dials, if any.
func (p *lbProc) print(out io.Writer) {
	_, acc, dial, last, err := p.figures()
	switch {
	case err != nil:
		fmt.Fprintf(out, "  the balancer cannot be asked: %v\n", err)
	case acc > 0:
		fmt.Fprintf(out, "  the balancer failed to accept %d connections (last: %s)\n", acc, last)
	}
	if dial > 0 {
		fmt.Fprintf(out, "  the balancer failed %d dials to a replica\n", dial)
	}
}

// Close ends the balancer process and every connection it relays.
func (p *lbProc) Close() {
	p.in.Close()
	_ = p.cmd.Wait()
}
