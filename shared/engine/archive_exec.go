package engine

import (
	"context"
	"fmt"
	"io"
	"time"
)

// maxCommandOutput is how much of a command's output RunCommand keeps.
const maxCommandOutput = 64 << 10

// CommandResult is the outcome of a command run to completion in a container.
type CommandResult struct {
	ExitCode int
	Output   string // stdout and stderr together, at most maxCommandOutput bytes
}

// RunCommand runs cmd (no shell: argv as given) as root in a running
// container, waits for it to end and returns its exit code and output. It
// goes through the agent's exec operation for agent environments.
func (c *Client) RunCommand(ctx context.Context, containerID string, cmd []string) (CommandResult, error) {
	containerID, err := checkContainer(containerID)
	if err != nil {
		return CommandResult{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	id, err := c.CreateExec(ctx, containerID, ExecSpec{Cmd: cmd, User: "root", Tty: true})
	if err != nil {
		return CommandResult{}, err
	}
	st, err := c.StartExec(ctx, id, true)
	if err != nil {
		return CommandResult{}, err
	}
	defer st.Close()
	_ = st.CloseWrite() // no input: the command must not wait for any
	done := make(chan struct{})
	var out []byte
	var readErr error
	go func() {
		defer close(done)
		out, readErr = io.ReadAll(io.LimitReader(st, maxCommandOutput))
		_, _ = io.Copy(io.Discard, st) // the rest, so that the command is not blocked on its output
	}()
	select {
	case <-done:
	case <-ctx.Done():
		_ = st.Close()
		<-done
		return CommandResult{}, ctx.Err()
	}
	if readErr != nil && ctx.Err() != nil {
		return CommandResult{}, ctx.Err()
	}
	// The output ends when the process does; the engine may record the exit
	// a moment later.
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 200*time.Millisecond) {
		state, err := c.InspectExec(ctx, id)
		if err != nil {
			return CommandResult{}, err
		}
		if !state.Running {
			return CommandResult{ExitCode: state.ExitCode, Output: string(out)}, nil
		}
		select {
		case <-ctx.Done():
			return CommandResult{}, fmt.Errorf("command %q did not end: %w", cmd[0], ctx.Err())
		case <-time.After(wait):
		}
	}
}
