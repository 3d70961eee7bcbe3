package engine

import (
	"io"
	"log/slog"

	"github.com/sirupsen/logrus"
)

// RouteComposeLogs sends the compose library's own log lines (it logs
// through the process-wide logrus logger, e.g. "variable is not set"
// warnings) to log, warnings and above only. Call it once, from main.
func RouteComposeLogs(log *slog.Logger) {
	logrus.SetOutput(io.Discard)
	logrus.SetLevel(logrus.WarnLevel)
	logrus.AddHook(slogHook{log: log.With("component", "compose")})
}

type slogHook struct{ log *slog.Logger }

func (slogHook) Levels() []logrus.Level {
	return []logrus.Level{logrus.PanicLevel, logrus.FatalLevel, logrus.ErrorLevel, logrus.WarnLevel}
}

func (h slogHook) Fire(e *logrus.Entry) error {
	level := slog.LevelWarn
	if e.Level <= logrus.ErrorLevel {
		level = slog.LevelError
	}
	h.log.Log(e.Context, level, e.Message)
	return nil
}
