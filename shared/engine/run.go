package engine

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// SaveImage writes the image ref as a "docker save" tarball to w.
func (c *Client) SaveImage(ctx context.Context, ref string, w io.Writer) error {
	if err := CheckImage(ref); err != nil {
		return err
	}
	rc, err := c.cli.ImageSave(ctx, []string{ref})
	if err != nil {
		return c.fail(err)
	}
	defer rc.Close()
	if _, err := io.Copy(w, rc); err != nil {
		return fmt.Errorf("engine: save image %s: %w", ref, err)
	}
	return nil
}

// RunSpec is a one-off container: run, collect its output, remove.
type RunSpec struct {
	Image  string
	Cmd    []string
	Env    []string
	Binds  []string
	Labels map[string]string
}

// RunOutput is what a one-off container printed and how it ended.
type RunOutput struct {
	Stdout, Stderr []byte
	ExitCode       int64
}

// Run runs a one-off container to its end (or ctx's), returns its output,
// and removes it in every case.
func (c *Client) Run(ctx context.Context, spec RunSpec) (RunOutput, error) {
	if err := CheckImage(spec.Image); err != nil {
		return RunOutput{}, err
	}
	res, err := c.cli.ContainerCreate(ctx, client.ContainerCreateOptions{
		Config:     &container.Config{Image: spec.Image, Cmd: spec.Cmd, Env: spec.Env, Labels: spec.Labels},
		HostConfig: &container.HostConfig{Binds: spec.Binds},
	})
	if err != nil {
		return RunOutput{}, c.fail(err)
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), callTimeout)
		defer cancel()
		_, _ = c.cli.ContainerRemove(rctx, res.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	}()
	wait := c.cli.ContainerWait(ctx, res.ID, client.ContainerWaitOptions{Condition: container.WaitConditionNextExit})
	if _, err := c.cli.ContainerStart(ctx, res.ID, client.ContainerStartOptions{}); err != nil {
		return RunOutput{}, c.fail(err)
	}
	var out RunOutput
	select {
	case w := <-wait.Result:
		out.ExitCode = w.StatusCode
	case err := <-wait.Error:
		return RunOutput{}, c.fail(err)
	case <-ctx.Done():
		return RunOutput{}, ctx.Err()
	}
	var stdout, stderr bytes.Buffer
	err = c.Logs(ctx, res.ID, false, LogOptions{Tail: "all"}, func(l LogLine) error {
		b := &stdout
		if l.Stream == "stderr" {
			b = &stderr
		}
		b.WriteString(l.Text)
		b.WriteByte('\n')
		return nil
	})
	out.Stdout, out.Stderr = stdout.Bytes(), stderr.Bytes()
	return out, err
}
