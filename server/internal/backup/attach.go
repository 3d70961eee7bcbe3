package backup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/fault"
)

// inputError is a failure to read the standard input of an attached run:
// restic was killed before it saw the end of an incomplete input.
type inputError struct{ err error }

func (e *inputError) Error() string { return "reading the input: " + e.err.Error() }
func (e *inputError) Unwrap() error { return e.err }

// follow waits for the helper id's own process to end, each line of its
// output given to line, and returns its exit code.
func (x *Restic) follow(ctx context.Context, w Where, id string, line func(engine.LogLine)) (int64, error) {
	lctx, cancelLogs := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelLogs()
	logsDone := make(chan error, 1)
	go func() {
		logsDone <- w.Client.Logs(lctx, id, false, engine.LogOptions{Follow: true, Tail: "all"}, func(l engine.LogLine) error {
			line(l)
			return nil
		})
	}()
	code, err := w.Client.WaitHelper(ctx, id)
	if err != nil {
		cancelLogs()
		<-logsDone
		return 0, err
	}
	select {
	case <-logsDone:
	case <-time.After(logsTimeout):
		cancelLogs()
		<-logsDone
	}
	return code, nil
}

// attached runs cmd as an exec in the running helper id, its standard
// input read from in, each line of its output given to line, and returns
// its exit code. The exec goes through the environment's own transport
// (socket, TCP, Berth agent). When in fails, or ctx ends, the helper is
// removed before restic could take the end of its input for the end of
// the data: it makes no snapshot of a part.
func (x *Restic) attached(ctx context.Context, w Where, id string, cmd []string, in io.Reader, line func(engine.LogLine)) (int64, error) {
	eid, err := w.Client.CreateExec(ctx, id, engine.ExecSpec{Cmd: cmd})
	if err != nil {
		return 0, err
	}
	st, err := w.Client.StartExec(ctx, eid, false)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	// kill removes the helper once; a second call returns when it is
	// removed (the process's end closes the output before that).
	var once sync.Once
	kill := func() {
		once.Do(func() {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), logsTimeout)
			defer cancel()
			if err := w.Client.RemoveContainer(rctx, id, true); err != nil && !errors.Is(err, engine.ErrNotFound) {
				x.log.Warn("backup: removing a helper", "env", w.EnvID, "container", id, "err", err)
			}
		})
	}
	stop := context.AfterFunc(ctx, func() {
		kill()
		st.Close()
	})
	defer stop()

	src := &failedReader{r: in}
	fed := make(chan struct{})
	go func() {
		defer close(fed)
		if _, err := io.Copy(st, src); err != nil {
			if src.failed() != nil {
				kill()
				st.Close()
			}
			return // else restic ended without reading it all
		}
		if err := st.CloseWrite(); err != nil {
			x.log.Warn("backup: closing restic's input", "env", w.EnvID, "container", id, "err", err)
		}
	}()
	rerr := st.Lines(func(l engine.LogLine) error {
		line(l)
		return nil
	})
	if err := src.failed(); err != nil {
		kill()
		return 0, &inputError{err: err}
	}
	if ctx.Err() != nil {
		kill()
		return 0, ctx.Err()
	}
	if rerr != nil {
		return 0, fault.Wrap(fault.Internal, "Reading restic's output failed", rerr)
	}
	// The output ends as the process does; the engine may tell its exit a
	// moment later.
	for i := 0; ; i++ {
		s, err := w.Client.InspectExec(context.WithoutCancel(ctx), eid)
		if err != nil {
			return 0, err
		}
		if !s.Running {
			if s.ExitCode == 0 {
				// restic succeeded: it read all of in.
				<-fed
			}
			return int64(s.ExitCode), nil
		}
		if i == 100 {
			return 0, fmt.Errorf("backup: restic's output ended but its exec %s still runs", eid)
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// failedReader reads r and keeps its first failure (other than its end).
type failedReader struct {
	r   io.Reader
	mu  sync.Mutex
	err error
}

func (f *failedReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		f.mu.Lock()
		if f.err == nil {
			f.err = err
		}
		f.mu.Unlock()
	}
	return n, err
}

func (f *failedReader) failed() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}
