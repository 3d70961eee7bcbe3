package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/berth-dev/berth/server/internal/backup"
	"github.com/berth-dev/berth/server/internal/helperimage"
	"github.com/berth-dev/berth/server/internal/helperimage/helperimagetest"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/enginetest"
)

// backupLabel marks the volumes of the backup benchmark.
const backupLabel = "berth.bench.backup"

// backupFigures are the backup benchmark's results.
type backupFigures struct {
	measured               bool
	mib                    int
	rawBackup, rawRestore  time.Duration
	berthBackup, berthRest time.Duration
	rssBefore, rssPeak     int64
}

// benchBackup fills a volume with mib MiB of random data (incompressible, no
// duplicate blocks), then backs it up to a fresh local restic repository and
// restores it twice: by hand with the host's restic reading the volume's
// directory on the host, and through Berth's backup runner (restic in a
// helper container next to the volume, as every backup runs). It prints the
// throughput of each and the RSS of this process (which runs Berth's runner)
// before and at its peak during Berth's runs: the data never passes
// through it.
func benchBackup(ctx context.Context, image string, mib int, out io.Writer) (fig backupFigures, err error) {
	restic, err := exec.LookPath(os.Getenv("BERTH_TEST_RESTIC"))
	if os.Getenv("BERTH_TEST_RESTIC") == "" {
		restic, err = exec.LookPath("restic")
	}
	if err != nil {
		return fig, fmt.Errorf("restic: %w (run scripts/test-env.sh)", err)
	}
	set := helperimage.Embedded()
	if !set.Built("amd64") && !set.Built("arm64") && !set.Built("arm") {
		if set, err = helperimagetest.Set(); err != nil {
			return fig, err
		}
	}
	c, err := engine.NewManager(slog.New(slog.DiscardHandler)).Client(ctx,
		engine.Endpoint{ID: 1, ConnectionType: engine.Socket, SocketPath: enginetest.Socket})
	if err != nil {
		return fig, err
	}
	dir, err := os.MkdirTemp("", "berth-bench-backup-")
	if err != nil {
		return fig, err
	}
	tag := strings.ToLower(rand.Text()[:8])
	vol, restored := "berth-bench-backup-"+tag, "berth-bench-restored-"+tag
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		for _, v := range []string{vol, restored} {
			if rerr := c.RemoveVolume(cctx, v, true); rerr != nil && !errors.Is(rerr, engine.ErrNotFound) {
				err = errors.Join(err, rerr)
			}
		}
		os.RemoveAll(dir)
	}()

	fmt.Fprintf(out, "\nbackup and restore of a %d MiB volume (random data) to a local restic repository:\n", mib)
	mount, err := fillVolume(ctx, image, vol, mib)
	if err != nil {
		return fig, fmt.Errorf("filling the volume: %w", err)
	}

	// By hand: the host's restic on the volume's directory.
	password := rand.Text()
	rawRepo := filepath.Join(dir, "raw")
	resticCmd := func(args ...string) error {
		cmd := exec.CommandContext(ctx, restic, append([]string{"-r", rawRepo, "--no-cache", "-q"}, args...)...)
		cmd.Env = append(os.Environ(), "RESTIC_PASSWORD="+password)
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("restic %s: %w: %s", args[0], err, b)
		}
		return nil
	}
	if err := resticCmd("init"); err != nil {
		return fig, err
	}
	t0 := time.Now()
	if err := resticCmd("backup", mount); err != nil {
		return fig, err
	}
	fig.rawBackup = time.Since(t0)
	t0 = time.Now()
	if err := resticCmd("restore", "latest", "--target", filepath.Join(dir, "raw-restore")); err != nil {
		return fig, err
	}
	fig.rawRestore = time.Since(t0)
	os.RemoveAll(filepath.Join(dir, "raw-restore"))

	// Through Berth's runner: restic next to the volume.
	runner := backup.New(backup.Config{Restic: restic, Helper: set})
	where := backup.Where{EnvID: 1, Client: c, Owner: "berth-bench-" + tag}
	repo := backup.Repo{Type: backup.TypeLocal, Repository: filepath.Join(dir, "berth"), Password: password}
	if _, err := runner.Init(ctx, where, repo); err != nil { // loads the backup image: not timed
		return fig, err
	}
	if _, err := c.CreateVolume(ctx, engine.VolumeSpec{Name: restored, Labels: map[string]string{backupLabel: tag}}); err != nil {
		return fig, err
	}
	var peak atomic.Int64
	fig.rssBefore, _ = statusBytes(os.Getpid(), "VmRSS:")
	stop := watchRSS(&peak)
	t0 = time.Now()
	sum, err := runner.Backup(ctx, where, repo, backup.Source{Volumes: []string{vol}, Tags: []string{"berth:bench"}}, nil)
	fig.berthBackup = time.Since(t0)
	if err == nil {
		t0 = time.Now()
		err = runner.Restore(ctx, where, repo, sum.SnapshotID, backup.Target{Volumes: map[string]string{vol: restored}}, nil)
		fig.berthRest = time.Since(t0)
	}
	stop()
	if err != nil {
		return fig, err
	}
	fig.rssPeak, fig.mib, fig.measured = peak.Load(), mib, true

	rate := func(d time.Duration) string { return fmt.Sprintf("%.0f MiB/s", float64(mib)/d.Seconds()) }
	fmt.Fprintf(out, "  restic by hand on the host:   backup %.2f s (%s), restore %.2f s (%s)\n",
		fig.rawBackup.Seconds(), rate(fig.rawBackup), fig.rawRestore.Seconds(), rate(fig.rawRestore))
	fmt.Fprintf(out, "  through Berth (helper on the engine): backup %.2f s (%s, %.2fx), restore %.2f s (%s, %.2fx)\n",
		fig.berthBackup.Seconds(), rate(fig.berthBackup), ratio(fig.berthBackup, fig.rawBackup),
		fig.berthRest.Seconds(), rate(fig.berthRest), ratio(fig.berthRest, fig.rawRestore))
	fmt.Fprintf(out, "  RSS of the process running Berth's runner: %.1f MB before, %.1f MB at its peak during both runs\n",
		float64(fig.rssBefore)/(1<<20), float64(fig.rssPeak)/(1<<20))
	return fig, nil
}

// fillVolume creates volume name, writes mib MiB of random data into it
// (files of 64 MiB) from a container of image, and returns the volume's
// directory on the host.
func fillVolume(ctx context.Context, image, name string, mib int) (string, error) {
	files := max(mib/64, 1)
	script := fmt.Sprintf("i=0; while [ $i -lt %d ]; do dd if=/dev/urandom of=/v/f$i bs=1M count=%d 2>/dev/null || exit 1; i=$((i+1)); done",
		files, mib/files)
	docker := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "docker", args...)
		cmd.Env = append(os.Environ(), "DOCKER_HOST=unix://"+enginetest.Socket)
		b, err := cmd.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("docker %s: %w: %s", args[0], err, b)
		}
		return strings.TrimSpace(string(b)), nil
	}
	if _, err := docker("volume", "create", "--label", backupLabel+"=1", name); err != nil {
		return "", err
	}
	if _, err := docker("run", "--rm", "--label", backupLabel+"=1", "-v", name+":/v", image, "sh", "-c", script); err != nil {
		return "", err
	}
	return docker("volume", "inspect", "-f", "{{.Mountpoint}}", name)
}

// watchRSS records this process's largest RSS in peak every 20 ms until
// the returned function is called.
func watchRSS(peak *atomic.Int64) func() {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			if rss, err := statusBytes(os.Getpid(), "VmRSS:"); err == nil && rss > peak.Load() {
				peak.Store(rss)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}
