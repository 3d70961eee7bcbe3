package notify_test

import (
	"context"
	"strings"
	"testing"

	"github.com/berth-dev/berth/server/internal/store"
	"github.com/berth-dev/berth/shared/engine"
	"github.com/berth-dev/berth/shared/enginetest"
)

// A local-socket environment whose disk warning is on, at a threshold its
// real data-root filesystem (docker info's DockerRootDir) is above, notifies
// disk_space_warning through its subscribed channel as the service starts.
func TestLocalEnvironmentAboveItsDiskThresholdNotifies(t *testing.T) {
	env, m := firstDiskWarning(t, "disk-", store.DiskWarning{Enabled: true, ThresholdPercent: 1})
	if m["title"] != "Disk space low on "+env.Name || !strings.Contains(m["message"].(string), "threshold 1%") {
		t.Errorf("disk warning = %v", m)
	}
}

// In the absolute mode, an environment whose engine's images, containers,
// volumes and build cache take more than its thresholdGb notifies, with the
// engine's disk use in the message.
func TestEnvironmentAboveItsAbsoluteDiskThresholdNotifies(t *testing.T) {
	// 100 percent could never be crossed: only the absolute threshold (1 KB) can warn.
	_, m := firstDiskWarning(t, "disk-abs-", store.DiskWarning{Enabled: true, Mode: store.DiskAbsolute,
		ThresholdPercent: 100, ThresholdGb: 1e-6})
	if msg, _ := m["message"].(string); !strings.Contains(msg, "build cache take") || !strings.Contains(msg, "threshold 1e-06 GB") {
		t.Errorf("disk warning = %v", m)
	}
}

// firstDiskWarning creates a local-socket environment (named prefix +
// unique) with disk warning dw, subscribes a webhook channel to its
// disk_space_warning, starts the service and returns the environment and
// the first warning the receiver gets.
func firstDiskWarning(t *testing.T, prefix string, dw store.DiskWarning) (store.Environment, map[string]any) {
	t.Helper()
	enginetest.Require(t)
	ctx := context.Background()
	st := openStore(t)
	env := store.Environment{Name: prefix + unique(t), ConnectionType: engine.Socket, SocketPath: enginetest.Socket,
		Port: 2375, Protocol: "http", Labels: []string{}}
	if err := st.CreateEnvironment(ctx, &env); err != nil {
		t.Fatal(err)
	}
	if err := st.SetDiskWarning(ctx, env.ID, dw); err != nil {
		t.Fatal(err)
	}
	rcv := newReceiver(t, 0)
	ch := createChannel(t, st, "webhook", "hook", `{"url":"`+rcv.URL+`"}`, "disk_space_warning")
	sub := store.EnvironmentNotification{EnvironmentID: env.ID, NotificationID: ch.ID, Enabled: true}
	if err := st.SaveEnvironmentNotification(ctx, &sub, true); err != nil {
		t.Fatal(err)
	}
	newService(t, st, nil)
	eventually(t, "the disk warning", func() bool { return len(rcv.messages("disk_space_warning", env.Name)) > 0 })
	return env, rcv.messages("disk_space_warning", env.Name)[0]
}
