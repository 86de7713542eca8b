package perftest

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfclones/perfclones/internal/cli"
)

func runClass(t *testing.T, class string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Runjava(context.Background(), append([]string{"com.rabbitmq.perf." + class}, args...),
		cli.IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: cli.Env(nil)})
	return code, out.String(), errb.String()
}

func TestPerfTestMultiErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	out := filepath.Join(dir, "result.js")
	for _, tc := range []struct {
		name           string
		args           []string
		code           int
		stdout, stderr string
	}{
		{"no arguments", nil, 1, "Usage: PerfTestMulti input-json-file output-json-file\n", ""},
		{"one argument", []string{"spec.js"}, 1, "Usage: PerfTestMulti input-json-file output-json-file\n", ""},
		{"missing file", []string{filepath.Join(dir, "nope.js"), out}, 1, "Input json file " + filepath.Join(dir, "nope.js") + " could not be found\n", ""},
		{"empty file", []string{write("empty.js", ""), out}, 1, "Input json file could not be parsed\n", ""},
		{"missing name", []string{write("noname.js", "[{'type': 'simple', 'params': []}]"), out}, 1, "",
			"Exception in thread \"main\" java.lang.RuntimeException: Key name not found.\n"},
		{"unknown type", []string{write("type.js", "[{'name': 'a', 'type': 'odd', 'params': [{}]}]"), out}, 1, "",
			"Exception in thread \"main\" java.lang.RuntimeException: Type odd was not simple or varying.\n"},
		{"wrong value type", []string{write("wrong.js", "[{'name': 7, 'type': 'simple', 'params': []}]"), out}, 1, "",
			"Exception in thread \"main\" java.lang.RuntimeException: Object under key name was a class java.lang.Double, not a class java.lang.String.\n"},
		{"unknown parameter", []string{write("param.js", "[{'name': 'a', 'type': 'simple', 'params': [{'bogus-key': 1}]}]"), out}, 1, "",
			"Exception in thread \"main\" java.lang.RuntimeException: Could not find property bogusKey in class com.rabbitmq.perf.MulticastParams\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runClass(t, "PerfTestMulti", tc.args...)
			if code != tc.code || stdout != tc.stdout || stderr != tc.stderr {
				t.Errorf("code %d stdout %q stderr %q; want %d %q %q", code, stdout, stderr, tc.code, tc.stdout, tc.stderr)
			}
		})
	}
}

func TestSpecParsing(t *testing.T) {
	specs, err := parseSpec([]byte(`[{'name': 'it''s', 'type': 'varying', 'interval': 500, 'uri': 'amqp://h',
		'params': [{'time-limit': 3, "rate": 100, 'flags': 'persistent,mandatory'}],
		'variables': [{'name': 'min-msg-size', 'values': [0, 1000]}]}]`))
	if err == nil {
		t.Fatalf("a stray quote should not parse: %+v", specs)
	}
	specs, err = parseSpec([]byte(`[{'name': 'x', 'type': 'varying', 'interval': 500, 'uri': 'amqp://h',
		'params': [{'time-limit': 3, "rate": 100, 'flags': 'persistent,mandatory'}],
		'variables': [{'name': 'min-msg-size', 'values': [0, 1000]}]}]`))
	if err != nil {
		t.Fatal(err)
	}
	s := specs[0]
	if s.name != "x" || s.interval != 500 || s.uri != "amqp://h" || len(s.variables) != 1 || s.variables[0].name != "minMsgSize" {
		t.Errorf("spec %+v", s)
	}
	o := multicastDefaults("amqp://h")
	for k, v := range s.params[0] {
		paramKeys[propertyName(k)](o, v)
	}
	if o.timeLimit != 3 || o.producerRate != 100 || strings.Join(o.flags, ",") != "persistent,mandatory" || !o.autoDelete {
		t.Errorf("options %+v", o)
	}
	for key, want := range map[string]string{"producer-count": "producerCount", "rate": "producerRateLimit",
		"consumer-rate": "consumerRateLimit", "body": "bodyFiles", "queue-sequence-from": "queueSequenceFrom"} {
		if got := propertyName(key); got != want {
			t.Errorf("propertyName(%q) = %q, want %q", key, got, want)
		}
	}
}

func TestGsonPretty(t *testing.T) {
	got := gsonPretty(map[string]any{
		"b": map[string]any{"rate": 0.0, "big": 2.405e7, "n": int64(1000), "list": []any{"1000.0", "0.0"}, "empty": []any{}},
		"a": []map[string]any{{"elapsed": int64(1000), "avg-latency": int64(5)}},
	})
	want := `{
  "a": [
    {
      "avg-latency": 5,
      "elapsed": 1000
    }
  ],
  "b": {
    "big": 2.405E7,
    "empty": [],
    "list": [
      "1000.0",
      "0.0"
    ],
    "n": 1000,
    "rate": 0.0
  }
}`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if v := valueString(1000.0); v != "1000.0" {
		t.Errorf("valueString(1000.0) = %q", v)
	}
	if v := valueString(315); v != "315" {
		t.Errorf("valueString(315) = %q", v)
	}
}

func TestScenarioStatsIgnoreTheWarmUp(t *testing.T) {
	st := &scenarioStats{interval: 1000, minMsgSize: 10}
	for i := 0; i < 6; i++ {
		st.onReport(intervalReport{elapsedMs: 1000, sent: int64(1000 * (i + 1)), received: 500, latencyCount: 2, latencyMean: 10, latencyMin: 5, latencyMax: 15})
	}
	r := st.results()
	// Samples 4 to 6 (4000+5000+6000 sent in 3 s) make the average.
	if r["send-msg-rate"] != 5000.0 || r["send-bytes-rate"] != 50000.0 || r["recv-msg-rate"] != 500.0 || r["avg-latency"] != int64(10) {
		t.Errorf("results %v", r)
	}
	samples := r["samples"].([]map[string]any)
	if len(samples) != 6 || samples[5]["elapsed"] != int64(6000) || samples[0]["send-msg-rate"] != 1000.0 || samples[0]["min-latency"] != int64(5) {
		t.Errorf("samples %v", samples)
	}
}

func TestWebServer(t *testing.T) {
	code, stdout, _ := runClass(t, "WebServer", "only-one")
	if code != 1 || stdout != "Usage: WebServer [baseDirectory] [port]\n" {
		t.Errorf("one argument: %d %q", code, stdout)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "perf.js"), []byte("// the user's own"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(webHandler(dir))
	defer srv.Close()
	for path, want := range map[string]string{"/perf.js": "// the user's own", "/lib/jquery.min.js": "perfclones", "/perf.css": "perfclones"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(b.String(), want) {
			t.Errorf("%s: %d, no %q", path, resp.StatusCode, want)
		}
	}
	resp, err := http.Get(srv.URL + "/missing.html")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("missing file: %d", resp.StatusCode)
	}
}
