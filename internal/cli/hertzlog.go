package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/cloudwego/hertz/pkg/common/hlog"
)

// RouteHertzLogs sends Hertz's own log lines to log, so that a service
// writes one log format. Hertz keeps its logger in a package variable, so
// this is for mains, once, at start-up.
func RouteHertzLogs(log *slog.Logger) {
	hlog.SetLogger(hertzLogger{log.With("component", "hertz")})
}

// hertzLogger adapts an slog.Logger to hlog.FullLogger. Trace and debug
// lines are debug, info and notice are info, fatal is an error and exits.
type hertzLogger struct{ log *slog.Logger }

func (l hertzLogger) emit(ctx context.Context, level slog.Level, msg string) {
	l.log.Log(ctx, level, msg)
}

func (l hertzLogger) fatal(ctx context.Context, msg string) {
	l.emit(ctx, slog.LevelError, msg)
	os.Exit(1)
}

var bg = context.Background()

func (l hertzLogger) Trace(v ...any)  { l.emit(bg, slog.LevelDebug, fmt.Sprint(v...)) }
func (l hertzLogger) Debug(v ...any)  { l.emit(bg, slog.LevelDebug, fmt.Sprint(v...)) }
func (l hertzLogger) Info(v ...any)   { l.emit(bg, slog.LevelInfo, fmt.Sprint(v...)) }
func (l hertzLogger) Notice(v ...any) { l.emit(bg, slog.LevelInfo, fmt.Sprint(v...)) }
func (l hertzLogger) Warn(v ...any)   { l.emit(bg, slog.LevelWarn, fmt.Sprint(v...)) }
func (l hertzLogger) Error(v ...any)  { l.emit(bg, slog.LevelError, fmt.Sprint(v...)) }
func (l hertzLogger) Fatal(v ...any)  { l.fatal(bg, fmt.Sprint(v...)) }

func (l hertzLogger) Tracef(f string, v ...any)  { l.emit(bg, slog.LevelDebug, fmt.Sprintf(f, v...)) }
func (l hertzLogger) Debugf(f string, v ...any)  { l.emit(bg, slog.LevelDebug, fmt.Sprintf(f, v...)) }
func (l hertzLogger) Infof(f string, v ...any)   { l.emit(bg, slog.LevelInfo, fmt.Sprintf(f, v...)) }
func (l hertzLogger) Noticef(f string, v ...any) { l.emit(bg, slog.LevelInfo, fmt.Sprintf(f, v...)) }
func (l hertzLogger) Warnf(f string, v ...any)   { l.emit(bg, slog.LevelWarn, fmt.Sprintf(f, v...)) }
func (l hertzLogger) Errorf(f string, v ...any)  { l.emit(bg, slog.LevelError, fmt.Sprintf(f, v...)) }
func (l hertzLogger) Fatalf(f string, v ...any)  { l.fatal(bg, fmt.Sprintf(f, v...)) }

func (l hertzLogger) CtxTracef(ctx context.Context, f string, v ...any) {
	l.emit(ctx, slog.LevelDebug, fmt.Sprintf(f, v...))
}
func (l hertzLogger) CtxDebugf(ctx context.Context, f string, v ...any) {
	l.emit(ctx, slog.LevelDebug, fmt.Sprintf(f, v...))
}
func (l hertzLogger) CtxInfof(ctx context.Context, f string, v ...any) {
	l.emit(ctx, slog.LevelInfo, fmt.Sprintf(f, v...))
}
func (l hertzLogger) CtxNoticef(ctx context.Context, f string, v ...any) {
	l.emit(ctx, slog.LevelInfo, fmt.Sprintf(f, v...))
}
func (l hertzLogger) CtxWarnf(ctx context.Context, f string, v ...any) {
	l.emit(ctx, slog.LevelWarn, fmt.Sprintf(f, v...))
}
func (l hertzLogger) CtxErrorf(ctx context.Context, f string, v ...any) {
	l.emit(ctx, slog.LevelError, fmt.Sprintf(f, v...))
}
func (l hertzLogger) CtxFatalf(ctx context.Context, f string, v ...any) {
	l.fatal(ctx, fmt.Sprintf(f, v...))
}

// SetLevel and SetOutput are no-ops: the slog.Logger's handler decides.
func (hertzLogger) SetLevel(hlog.Level) {}
func (hertzLogger) SetOutput(io.Writer) {}
