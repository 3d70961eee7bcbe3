package helperbin

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
)

// Exec runs program with args in place of berth-helper (the same process,
// so that a signal to the container reaches it), with the environment
// PATH and HOME plus the KEY=VALUE lines of envFile, which it removes once
// read (secrets are passed to a helper as files, never in its
// configuration). With out other than "-" the program's standard output
// goes to the file out (created, 0600).
func Exec(envFile, out, program string, args []string) error {
	env := []string{"PATH=/usr/bin:/bin", "HOME=/root"}
	if envFile != "-" {
		f, err := os.Open(envFile)
		if err != nil {
			return err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if line == "" {
				continue
			}
			if k, _, ok := strings.Cut(line, "="); !ok || k == "" {
				f.Close()
				return errors.New("exec: a line of the environment file is not KEY=VALUE")
			}
			env = append(env, line)
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return fmt.Errorf("exec: reading the environment file: %w", err)
		}
		if err := os.Remove(envFile); err != nil {
			return err
		}
	}
	if out != "-" {
		f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return err
		}
		if err := syscall.Dup3(int(f.Fd()), 1, 0); err != nil {
			return fmt.Errorf("exec: redirecting the output: %w", err)
		}
		f.Close()
	}
	return syscall.Exec(program, append([]string{program}, args...), env)
}

// Empty removes everything in each of dirs (the directories stay: they
// are mount points), without following a symbolic link.
func Empty(dirs []string) error {
	for _, d := range dirs {
		entries, err := os.ReadDir(d)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if err := os.RemoveAll(d + "/" + e.Name()); err != nil {
				return err
			}
		}
	}
	return nil
}
