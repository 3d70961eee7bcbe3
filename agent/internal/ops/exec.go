package ops

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/berth-dev/berth/shared/agentpb"
	"github.com/berth-dev/berth/shared/engine"
)

// exec attaches to an exec Berth created (through the Engine API pipe) and
// relays its terminal: stdin and resizes from Berth, output to Berth, then
// the exit code.
func (r *Runner) exec(ctx context.Context, st Stream, s *sender, start *agentpb.ExecStart) error {
	if err := engine.CheckExecID(start.GetExecId()); err != nil {
		return s.finish(err)
	}
	c, err := r.client(ctx)
	if err != nil {
		return s.finish(err)
	}
	stream, err := c.StartExec(ctx, start.GetExecId(), start.GetTty())
	if err != nil {
		return s.finish(err)
	}
	defer stream.Close()
	if err := s.send(&agentpb.OperationOutput{Output: &agentpb.OperationOutput_Ready{Ready: &agentpb.Ready{}}}); err != nil {
		return err
	}
	// Berth → process: stdin, resizes, end of input.
	go func() {
		for {
			in, err := st.Recv()
			if err != nil {
				stream.Close() // Berth left: end the session
				return
			}
			switch x := in.GetInput().(type) {
			case *agentpb.OperationInput_ExecStdin:
				if _, err := stream.Write(x.ExecStdin); err != nil {
					return
				}
			case *agentpb.OperationInput_ExecResize:
				rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				if err := c.ResizeExec(rctx, start.GetExecId(), uint(x.ExecResize.GetRows()), uint(x.ExecResize.GetCols())); err != nil {
					r.log.Debug("exec resize", "exec", start.GetExecId(), "err", err)
				}
				cancel()
			case *agentpb.OperationInput_CloseInput:
				_ = stream.CloseWrite()
			}
		}
	}()
	// Process → Berth, until the process ends.
	buf := make([]byte, 32<<10)
	for {
		n, err := stream.Read(buf)
		if n > 0 {
			chunk := make([]byte, n)
			copy(chunk, buf[:n])
			if serr := s.send(&agentpb.OperationOutput{Output: &agentpb.OperationOutput_ExecOutput{ExecOutput: chunk}}); serr != nil {
				return serr
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && ctx.Err() != nil {
				return nil // Berth left
			}
			break
		}
	}
	code := int32(-1)
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if stt, err := c.InspectExec(ictx, start.GetExecId()); err == nil && !stt.Running {
		code = int32(stt.ExitCode)
	}
	return s.send(&agentpb.OperationOutput{Output: &agentpb.OperationOutput_ExecExit{ExecExit: &agentpb.ExecExit{ExitCode: code}}})
}
