package engine

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
)

func TestComposeLogsGoToTheGivenLoggerOnly(t *testing.T) {
	var buf bytes.Buffer
	RouteComposeLogs(slog.New(slog.NewTextHandler(&buf, nil)))
	logrus.Info("chatter")
	logrus.Warn(`The "X" variable is not set. Defaulting to a blank string.`)
	out := buf.String()
	if strings.Contains(out, "chatter") || !strings.Contains(out, "variable is not set") || !strings.Contains(out, "component=compose") {
		t.Errorf("log = %q, want only the warning, tagged compose", out)
	}
}
