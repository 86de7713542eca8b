package perftest

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path"
	"strconv"
	"time"

	"github.com/perfclones/perfclones/internal/cli"
)

// Assets are the page assets perfclones ships: perf.js, perf.css, lib/
// (the jQuery and Flot calls the pages make) and an example page and
// spec, all written for perfclones. WebServer serves them where PerfTest's
// html/ folder has its own, and the dist archive installs them as html/.
//
//go:embed web
var embedded embed.FS

// Assets is the html/ tree: perf.js, perf.css, lib/, examples/.
var Assets = mustSub(embedded, "web")

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err)
	}
	return sub
}

// WebMain is 2.18's com.rabbitmq.perf.WebServer [baseDirectory port]: a
// static file server for the html pages, default ./html on port 8080,
// with directory listings, until killed. Files missing from the directory
// that perfclones ships (perf.js, perf.css, lib/...) come from Assets.
func WebMain(ctx context.Context, args []string, sys cli.IO) int {
	dir, port := "./html", 8080
	switch len(args) {
	case 0:
	case 2:
		dir = args[0]
		p, err := strconv.Atoi(args[1])
		if err != nil {
			return cli.Finish(sys, mainThreadExceptionPlain("java.lang.NumberFormatException", "For input string: \""+args[1]+"\""))
		}
		port = p
	default:
		fmt.Fprintln(sys.Stdout, "Usage: WebServer [baseDirectory] [port]")
		return 1
	}
	ln, err := net.Listen("tcp", ":"+strconv.Itoa(port))
	if err != nil {
		fmt.Fprintf(sys.Stderr, "Exception in thread \"main\" java.io.IOException: Failed to bind to 0.0.0.0/0.0.0.0:%d\n", port)
		return 1
	}
	srv := &http.Server{Handler: webHandler(dir), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(sys.Stderr, err)
		return 1
	}
	code, _ := cli.Interrupted(ctx)
	return code
}

func mainThreadExceptionPlain(class, msg string) *cli.Exit {
	return &cli.Exit{Code: 1, Stderr: "Exception in thread \"main\" " + class + ": " + msg + "\n"}
}

// webHandler serves dir, falling back to the shipped assets.
func webHandler(dir string) http.Handler {
	files := http.FileServer(http.Dir(dir))
	assets := http.FileServer(http.FS(Assets))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := path.Clean("/" + r.URL.Path)
		if _, err := os.Stat(dir + name); err != nil {
			if _, err := fs.Stat(Assets, name[1:]); err == nil || name == "/" {
				assets.ServeHTTP(w, r)
				return
			}
		}
		files.ServeHTTP(w, r)
	})
}
