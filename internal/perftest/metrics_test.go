package perftest

import (
	"encoding/json"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfclones/perfclones/internal/result"
	"github.com/perfclones/perfclones/internal/testenv"
)

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// runMainAsync runs Main with a result file, and returns its outcome on
// the channel once it ends.
func runMainAsync(t *testing.T, rel string, args []string) (<-chan int, string) {
	t.Helper()
	resultPath := filepath.Join(t.TempDir(), "result.json")
	done := make(chan int, 1)
	go func() {
		// The exchange comes from the environment (PerfTest's override), so
		// the command line stays the fixture's: the default "direct" is
		// declared durable by 2.19+ and not by 2.18, and tests of both
		// share one node.
		code, stdout, stderr := runMain(t, rel, args, map[string]string{result.Env: resultPath, "EXCHANGE": "perfclones-metrics-" + rel})
		if code != 0 {
			t.Errorf("%v: code %d\n%s%s", args, code, stdout, stderr)
		}
		done <- code
	}()
	return done, resultPath
}

func readResult(t *testing.T, path string) map[string]int64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var run result.Run
	if err := json.Unmarshal(data, &run); err != nil {
		t.Fatal(err)
	}
	ops := map[string]int64{}
	for _, test := range run.Tests {
		ops[test.Name] = test.Counts.Operations
	}
	return ops
}

var sampleValue = regexp.MustCompile(`(?m)^([^#].*) (\S+)$`)

// TestPrometheusEndpointInProcess scrapes -mpr's endpoint during a short
// run: the families, their HELP, TYPE and labels are the 2.22.1 jar's
// (testdata/prometheus-2.22.1.txt, its scrape with the values masked),
// and the values agree with the run's result file.
func TestPrometheusEndpointInProcess(t *testing.T) {
	env := testenv.RabbitMQ(t)
	want, err := os.ReadFile("testdata/prometheus-2.22.1.txt")
	if err != nil {
		t.Fatal(err)
	}
	wantLines := strings.Split(strings.TrimSuffix(string(want), "\n"), "\n")
	port := freePort(t)
	// The fixture's command line, -h and the metrics options aside.
	args := []string{"-h", env.URI, "-z", "3", "-r", "100", "-c", "10", "-mpr", "-mpp", strconv.Itoa(port),
		"-mc", "-mjp", "-mt", "env=test", "-mcla", "-em", "foo=3"}
	done, resultPath := runMainAsync(t, "2.22", args)
	endpoint := "http://127.0.0.1:" + strconv.Itoa(port) + "/metrics"
	var last string
	// The connections close before the endpoint does: their gauges are
	// checked at their highest.
	peak := map[string]float64{}
	for running := true; running; {
		select {
		case <-done:
			running = false
		case <-time.After(200 * time.Millisecond):
			resp, err := http.Get(endpoint)
			if err != nil {
				continue
			}
			body, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/plain" {
				t.Fatalf("scrape: %s, %q", resp.Status, resp.Header.Get("Content-Type"))
			}
			last = string(body)
			for name, v := range sampleValues(t, last) {
				if strings.HasPrefix(name, "client_c") && v > peak[name] {
					peak[name] = v
				}
			}
		}
	}
	if _, err := http.Get(endpoint); err == nil {
		t.Error("the endpoint still serves after the run")
	}
	masked := sampleValue.ReplaceAllString(strings.TrimSuffix(last, "\n"), "$1 NUM")
	if got := strings.Split(masked, "\n"); strings.Join(got, "\n") != strings.Join(wantLines, "\n") {
		t.Fatalf("scrape differs from the jar's: %s\n%s", firstDiff(strings.Join(got, "\n"), strings.Join(wantLines, "\n")), last)
	}
	values := sampleValues(t, last)
	for name, v := range peak {
		values[name] = v
	}
	ops := readResult(t, resultPath)
	for _, c := range []struct {
		meter string
		low   float64 // the least it may be
		high  int64   // the most: the result file's count
	}{
		{"client_published_total", 1, ops["publish"]},
		{"client_consumed_total", 1, ops["consume"]},
		{"client_acknowledged_total", 1, ops["consume"]},
		{"client_acknowledged_published_total", 1, ops["confirm"]},
		{"perftest_latency_seconds_count", 1, ops["consume"]},
		{"perftest_confirm_latency_seconds_count", 1, ops["confirm"]},
		// Frames with one confirm or more (-c 10 keeps at most 10 out).
		{"perftest_confirm_size_count", 1, ops["confirm"]},
		{"perftest_confirm_size_sum", 1, ops["confirm"]},
		{"perftest_confirm_size_max", 1, 10},
		{"client_failed_to_publish_total", 0, 0},
		{"perftest_published", 1, 200},
		{"perftest_consumed", 1, 200},
		{"perftest_confirmed", 1, 200},
		{"perftest_foo", 3, 3},
		{"perftest_expected_published", 100, 100},
		{"client_connections", 2, 3},
		{"client_channels", 2, 2},
		{"system_cpu_count", 1, 1024},
	} {
		if v, ok := values[c.meter]; !ok || v < c.low || v > float64(c.high) {
			t.Errorf("%s = %v, want %v to %d (result file: %v)", c.meter, v, c.low, c.high, ops)
		}
	}
	if got, want := values["client_published_total"], float64(ops["publish"]); got < want/3 {
		t.Errorf("client_published_total %v, the run published %v", got, want)
	}
}

// sampleValues are a scrape's values by family name, quantiles left out.
func sampleValues(t *testing.T, scrape string) map[string]float64 {
	t.Helper()
	values := map[string]float64{}
	for _, m := range sampleValue.FindAllStringSubmatch(scrape, -1) {
		name, _, _ := strings.Cut(m[1], "{")
		if strings.Contains(m[1], "quantile=") {
			continue
		}
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			t.Fatalf("%s: %v", m[0], err)
		}
		values[name] = v
	}
	return values
}

// datadogRequest is one request the Datadog registry sent.
type datadogRequest struct {
	method, path, contentType string
	body                      []byte
}

// TestDatadogPushInProcess: -mda posts the series every -mds step to
// -mdu's /api/v1/series with the API key, in the jar's shape (names,
// types, units, sorted tags with the statistic, the host from -mdh's
// tag), and with -mdak the meters' metadata; the step counts add up to
// no more than the run's.
func TestDatadogPushInProcess(t *testing.T) {
	env := testenv.RabbitMQ(t)
	var mu sync.Mutex
	var got []datadogRequest
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, datadogRequest{r.Method, r.URL.RequestURI(), r.Header.Get("Content-Type"), body})
		mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}))
	defer server.Close()
	args := []string{"-h", env.URI, "-z", "3", "-r", "50", "-mda", "-mdk", "the-key", "-mdak", "app-key", "-mdd", "-mds", "1",
		"-mdu", server.URL, "-mt", "node=n1,zone=a", "-mdh", "node"}
	done, resultPath := runMainAsync(t, "2.22", args)
	<-done
	ops := readResult(t, resultPath)
	mu.Lock()
	defer mu.Unlock()
	// Type, unit and extra tag of each series, as the jar sent them.
	shape := map[string][3]string{
		"perftest_published": {"gauge", "", "statistic:value"}, "perftest_consumed": {"gauge", "", "statistic:value"},
		"perftest_confirmed": {"gauge", "", "statistic:value"}, "perftest_nacked": {"gauge", "", "statistic:value"},
		"perftest_returned": {"gauge", "", "statistic:value"}, "perftest_expected_published": {"gauge", "", "statistic:value"},
		"perftest_latency.percentile": {"gauge", "millisecond", "statistic:value"},
		"perftest_latency.sum":        {"count", "millisecond", ""}, "perftest_latency.count": {"count", "occurrence", ""},
		"perftest_latency.avg": {"gauge", "millisecond", ""}, "perftest_latency.max": {"gauge", "millisecond", ""},
		"perftest_confirm.latency.percentile": {"gauge", "millisecond", "statistic:value"},
		"perftest_confirm.latency.sum":        {"count", "millisecond", ""}, "perftest_confirm.latency.count": {"count", "occurrence", ""},
		"perftest_confirm.latency.avg": {"gauge", "millisecond", ""}, "perftest_confirm.latency.max": {"gauge", "millisecond", ""},
		"perftest_confirm.size.percentile": {"gauge", "", "statistic:value"},
		"perftest_confirm.size.sum":        {"count", "", ""}, "perftest_confirm.size.count": {"count", "occurrence", ""},
		"perftest_confirm.size.avg": {"gauge", "", ""}, "perftest_confirm.size.max": {"gauge", "", ""},
	}
	posts, latencyCount := 0, 0.0
	metadata := map[string]string{}
	for _, req := range got {
		if req.contentType != "application/json" {
			t.Errorf("%s %s: content type %q", req.method, req.path, req.contentType)
		}
		if req.method == http.MethodPut {
			metadata[req.path] = string(req.body)
			continue
		}
		if req.method != http.MethodPost || req.path != "/api/v1/series?api_key=the-key" {
			t.Errorf("unexpected %s %s", req.method, req.path)
			continue
		}
		posts++
		var body struct {
			Series []struct {
				Metric string          `json:"metric"`
				Points [][]json.Number `json:"points"`
				Type   string          `json:"type"`
				Unit   string          `json:"unit"`
				Host   string          `json:"host"`
				Tags   []string        `json:"tags"`
			} `json:"series"`
		}
		d := json.NewDecoder(strings.NewReader(string(req.body)))
		d.UseNumber()
		if err := d.Decode(&body); err != nil {
			t.Fatalf("series body: %v\n%s", err, req.body)
		}
		seen := map[string]bool{}
		for _, s := range body.Series {
			want, ok := shape[s.Metric]
			seen[s.Metric] = true
			if !ok || s.Type != want[0] || s.Unit != want[1] || s.Host != "n1" || len(s.Points) != 1 || len(s.Points[0]) != 2 {
				t.Errorf("series %+v, want type, unit %q", s, want)
				continue
			}
			tags := append([]string{"node:n1", "zone:a"}, strings.Fields(want[2])...)
			if strings.HasSuffix(s.Metric, ".percentile") {
				tags = append(tags, "phi:")
			}
			for _, tag := range tags {
				if !strings.Contains(strings.Join(s.Tags, " "), tag) {
					t.Errorf("%s: tags %v, no %s", s.Metric, s.Tags, tag)
				}
			}
			if ts, _ := s.Points[0][0].Int64(); time.Since(time.Unix(ts, 0)) > time.Minute {
				t.Errorf("%s: timestamp %v", s.Metric, s.Points[0][0])
			}
			if s.Metric == "perftest_latency.count" {
				v, _ := s.Points[0][1].Float64()
				latencyCount += v
			}
		}
		if len(seen) != len(shape) {
			t.Errorf("post has %d of the %d metrics: %v", len(seen), len(shape), seen)
		}
	}
	if posts < 3 {
		t.Errorf("%d posts in a 3 s run with a 1 s step", posts)
	}
	if latencyCount < 1 || latencyCount > float64(ops["consume"]) {
		t.Errorf("latency counts add up to %v, the run consumed %d", latencyCount, ops["consume"])
	}
	if md := metadata["/api/v1/metrics/perftest_latency.count?api_key=the-key&application_key=app-key"]; md != `{"type":"count","unit":"occurrence","description":"message latency"}` {
		t.Errorf("metadata of perftest_latency.count: %q (all: %v)", md, metadata)
	}
}

// TestMetricsStartAndNotices: a port in use fails as PerfTest's endpoint
// does (2.22's JDK server; 2.18's Jetty connector, from its source), and the JVM-only options are named on stderr as having no
// equivalent, before the run goes on to the (unreachable) broker.
func TestMetricsStartAndNotices(t *testing.T) {
	ln, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	code, stdout, stderr := runMain(t, "2.22", []string{"-mpr", "-mpp", port, "-h", "amqp://127.0.0.1:1"}, nil)
	stdout = logTimeRe.ReplaceAllString(stdout, "HH:MM:SS.mmm ")
	if code != 1 || stderr != "Main thread caught exception: com.rabbitmq.perf.PerfTestException: Error while starting Prometheus HTTP server\n" ||
		stdout != "HH:MM:SS.mmm [main] ERROR com.rabbitmq.perf.PerfTest - Main thread caught exception\n"+
			"com.rabbitmq.perf.PerfTestException: Error while starting Prometheus HTTP server\n"+
			"Caused by: java.net.BindException: Address already in use\ntest stopped\n" {
		t.Errorf("port in use: code %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runMain(t, "2.18", []string{"-mpr", "-mpp", port, "-h", "amqp://127.0.0.1:1"}, nil)
	stdout = logTimeRe.ReplaceAllString(stdout, "HH:MM:SS.mmm ")
	if code != 1 || stderr != "Main thread caught exception: java.io.IOException: Failed to bind to 0.0.0.0/0.0.0.0:"+port+"\n" ||
		stdout != "HH:MM:SS.mmm [main] ERROR com.rabbitmq.perf.PerfTest - Main thread caught exception\n"+
			"java.io.IOException: Failed to bind to 0.0.0.0/0.0.0.0:"+port+"\nCaused by: java.net.BindException: Address already in use\n" {
		t.Errorf("2.18, port in use: code %d\n%s%s", code, stdout, stderr)
	}
	code, _, stderr = runMain(t, "2.18", []string{"-mjx", "-mjm", "-mt", "a=b", "-h", "amqp://127.0.0.1:1"}, nil)
	if code != 1 || !strings.Contains(stderr, "accepts -mjx, -mjm but has no equivalent") || strings.Contains(stderr, "does not act on") ||
		!strings.Contains(stderr, "java.net.ConnectException") {
		t.Errorf("-mjx -mjm: code %d, stderr %q", code, stderr)
	}
}

func TestJavaDoubleString(t *testing.T) {
	for v, want := range map[float64]string{
		0: "0.0", 1: "1.0", 100: "100.0", 0.5: "0.5", 0.00110592: "0.00110592", 6.81e-4: "6.81E-4",
		1.62e9: "1.62E9", 2.68435456e8: "2.68435456E8", 1e7: "1.0E7", 9999999: "9999999.0", -1: "-1.0", 3492: "3492.0",
	} {
		if got := javaDoubleString(v); got != want {
			t.Errorf("%v: %q, want %q", v, got, want)
		}
	}
}

// TestCommandLineLabel: -mcla's label, as the jar's scrapes showed it for
// these command lines.
func TestCommandLineLabel(t *testing.T) {
	for _, tc := range []struct{ args, want string }{
		{"-h amqp://u:p@host -z 12 -r 100 -mpr -mpp 18931 -mc -mjm -mjgc -mjt -mcl -mjp -mt env=test,zone=a -mcla -em expected_published=500,foo=3",
			"-z 12 -r 100 -em expected_published=500,foo=3"},
		{"-h amqp://u:p@host -z 6 -r 50 --producers 1 -mpr -mpp 18933 -mpe /prom -mpx pt_ -mcla -mc -C 200 -mt a=b -u mq1 --metrics-tags c=d",
			"-z 6 -r 50 --producers 1 -C 200 -u mq1"},
		{"-H amqp://u:p@host,amqp://u:p@host -z 5 -c 10 -mpr -mpp 18934 -mcla -mc -mjp -x 1 -y 1",
			"-H amqp://u:p@host,amqp://u:p@host -z 5 -c 10 -x 1 -y 1"},
	} {
		if got := commandLineLabel(strings.Fields(tc.args)); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.args, got, tc.want)
		}
	}
}

// TestExpectedPublished: perftest_expected_published from the rate
// options, for two producers (the jar showed +Inf for -r 10 and 50 for -r
// 50 with one).
func TestExpectedPublished(t *testing.T) {
	inf := math.Inf(1)
	for _, tc := range []struct {
		rate, interval float64
		variable       []string
		want           float64
	}{
		{50, 0, nil, 100}, {10, 0, nil, inf}, {1, 0, nil, 2}, {0.5, 0, nil, 1}, {0, 0, nil, 0},
		{-1, 2, nil, 1}, {-1, 0.5, nil, inf}, {-1, 0, []string{"7:3600"}, 14},
	} {
		m := &metricsExport{s: &metricsSettings{expectedPublishedFromOptions: true}, p: &plan{producerCount: 2},
			o: &options{producerRate: tc.rate, publishingInterval: tc.interval, variableRates: tc.variable}, started: time.Now()}
		if got := m.expectedPublished(); got != tc.want {
			t.Errorf("-r %v -P %v -vr %v: %v, want %v", tc.rate, tc.interval, tc.variable, got, tc.want)
		}
	}
}

// TestExposedMetrics: -em's pairs as PerfTest's convertKeyValuePairs and
// ExpectedMetrics read them.
func TestExposedMetrics(t *testing.T) {
	d := &releases.List[1].Diff
	for _, tc := range []struct {
		em, want string // want: the gauges, or the exception
	}{
		{"a=1,b=2.5,a=3", "a=3 b=2.5"},
		{"a=x,a=1", "a=1"},
		{"expected_published=7,c=1e3", "c=1000 expected_published=7"},
		{"a=true", `java.lang.NumberFormatException: For input string: "true"`},
		{"a", "java.lang.NumberFormatException: empty String"},
		{"=", "java.lang.ArrayIndexOutOfBoundsException: Index 1 out of bounds for length 0"},
	} {
		args := []string{"-em", tc.em}
		o, err := parseOptions(d, args, func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		s, e := readMetricsSettings(o.line, args)
		if e == nil {
			e = s.readExpected(d, o.line, o)
		}
		var got []string
		if e != nil {
			got = []string{e.String()}
		} else {
			for _, x := range s.exposed {
				got = append(got, x.name+"="+strconv.FormatFloat(x.value, 'g', -1, 64))
			}
			if s.expectedPublished {
				got = append(got, "expected_published="+strconv.FormatFloat(s.expectedPublishedFixed, 'g', -1, 64))
			}
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("-em %s: %q, want %q", tc.em, strings.Join(got, " "), tc.want)
		}
	}
}
