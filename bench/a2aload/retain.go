package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// maxRetained is issue 18's bound: a finished echo task kept costs the
// server at most 1 KiB of resident memory.
const maxRetained = 1024

// retainCmd measures what a finished task costs the echo server to keep:
// each build is started alone (its default bounds, retention long enough
// that nothing expires), warmed up and then filled with blocking sends
// whose tasks finish at once and are kept; its resident memory per kept
// task is (RSS after − RSS before) / tasks kept (counted by ListTasks,
// since a bound may have evicted some). Each reading is of a steady state:
// the server is first driven with ListTasks (which keep nothing) through
// a few GC cycles, so that its heap has grown to the goal its live data
// sets (twice it at GOGC=100), as it does under any load, then left idle.
// Over the fill it reports what the garbage collector cost per request,
// from the runtime's own trace (GODEBUG=gctrace=1 on the server's stderr)
// and the server's /metrics. Builds take turns over the rounds.
func retainCmd(args []string) error {
	fs := flag.NewFlagSet("retain", flag.ExitOnError)
	ours := fs.String("ours", "bin/a2amesh serve echo", "a2amesh echo service command")
	before := fs.String("before", "", "the same command of another build (the one before a change), measured in turn with ours (empty: none)")
	n := fs.Int("n", 16_000, "tasks to fill each server with (the default bounds keep 20,000 finished tasks and 64 MiB of them)")
	warm := fs.Int("warmup", 2_000, "tasks sent before the baseline is read")
	cycles := fs.Int("cycles", 3, "GC cycles to drive each server through before each reading")
	conns := fs.Int("conns", 8, "concurrent connections")
	settle := fs.Duration("settle", 5*time.Second, "idle time before each memory reading")
	limit := fs.Duration("timeout", 5*time.Minute, "longest fill")
	rounds := fs.Int("rounds", 2, "rounds; the builds take turns, the first alternating")
	if err := fs.Parse(args); err != nil {
		return err
	}
	builds := []string{*ours}
	names := []string{"ours"}
	if *before != "" {
		builds, names = append(builds, *before), append(names, "before")
	}
	ctx := context.Background()
	got := map[string][]retained{}
	for r := range *rounds {
		for _, i := range rotated(seq(len(builds)), r) {
			m, err := measureRetain(ctx, builds[i], "127.0.0.1:19171", *warm, *n, *conns, *cycles, *settle, *limit)
			if err != nil {
				return fmt.Errorf("%s: %w", names[i], err)
			}
			got[names[i]] = append(got[names[i]], m)
			fmt.Fprintf(os.Stderr, "round %d %-6s %s\n", r+1, names[i], m.row())
		}
	}
	fmt.Printf("## Finished tasks kept: memory per task and GC per request\n\n")
	fmt.Printf("Each build alone, GOGC %s: %d tasks of warm-up; RSS read; %d blocking sends of %q over %d connections (each a finished task, kept: retention 1h); RSS read. Before each reading, ListTasks (keeping nothing) through %d GC cycles, then %v idle. Per task: the RSS difference over the tasks kept (ListTasks' total), and the same of the Go heap the runtime holds (heap_sys − heap_released) and of its goal (next_gc: twice the live heap at GOGC=100), from /metrics. Over the fill, per request: the server's CPU (/proc), and the GC's cycles, CPU (every phase gctrace reports, idle marking included) and stop-the-world pause (/metrics go_gc_duration_seconds). Rounds alternate the builds; each row is a round.\n\n",
		gogcOf(got), *warm, *n, "hello", *conns, *cycles, *settle)
	fmt.Println("| build | tasks kept | RSS before | RSS after | RSS per task | Go heap held per task | heap goal per task | server CPU / req | GC cycles / 1000 req | GC CPU / req | GC pause / req | req/s |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, name := range names {
		for _, m := range got[name] {
			fmt.Printf("| %s %s |\n", name, m.row())
		}
	}
	rss := func(m retained) float64 { return float64(m.perTask()) }
	fmt.Printf("\nTarget, a finished echo task kept costs at most %d B of RSS: %.0f B, the median of the rounds (%s).\n",
		maxRetained, medianRetained(got["ours"], rss), verdict(medianRetained(got["ours"], rss) <= maxRetained))
	if len(names) == 2 {
		o, b := got["ours"], got["before"]
		cpu := func(m retained) float64 { return float64(m.cpuPerReq()) }
		gc := func(m retained) float64 { return float64(m.gcCPUPerReq()) }
		fmt.Printf("Ours against before, medians of the rounds: RSS per task %.0f B vs %.0f B (%.2f×); server CPU per request %v vs %v (%.2f×); GC CPU per request %v vs %v (%.2f×).\n",
			medianRetained(o, rss), medianRetained(b, rss), medianRetained(o, rss)/medianRetained(b, rss),
			time.Duration(medianRetained(o, cpu)).Round(100*time.Nanosecond), time.Duration(medianRetained(b, cpu)).Round(100*time.Nanosecond), medianRetained(o, cpu)/medianRetained(b, cpu),
			time.Duration(medianRetained(o, gc)).Round(10*time.Nanosecond), time.Duration(medianRetained(b, gc)).Round(10*time.Nanosecond), medianRetained(o, gc)/medianRetained(b, gc))
	}
	return nil
}

// medianRetained returns the median of f over ms (the mean of the two in
// the middle of an even count).
func medianRetained(ms []retained, f func(retained) float64) float64 {
	v := make([]float64, len(ms))
	for i, m := range ms {
		v[i] = f(m)
	}
	slices.Sort(v)
	if len(v)%2 == 0 {
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return v[len(v)/2]
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// retained is one build's measurement.
type retained struct {
	kept         int   // tasks the fill added, by ListTasks
	rss0, rss1   int64 // bytes
	goal0, goal1 int64 // go_memstats_next_gc_bytes
	held0, held1 int64 // go_memstats_heap_sys_bytes - go_memstats_heap_released_bytes
	requests     int
	elapsed      time.Duration
	cycles       int
	cpu, gcCPU   time.Duration // the server's, over the fill
	gcPause      time.Duration
	gogc         string
}

func (m retained) perTask() int64 {
	if m.kept == 0 {
		return 0
	}
	return (m.rss1 - m.rss0) / int64(m.kept)
}

func (m retained) gcCPUPerReq() time.Duration { return m.gcCPU / time.Duration(max(m.requests, 1)) }

func (m retained) cpuPerReq() time.Duration { return m.cpu / time.Duration(max(m.requests, 1)) }

func (m retained) cyclesPerK() float64 { return 1000 * float64(m.cycles) / float64(max(m.requests, 1)) }

func (m retained) row() string {
	per := func(a, b int64) int64 { return (b - a) / int64(max(m.kept, 1)) }
	return fmt.Sprintf("| %d | %d MiB | %d MiB | %d B | %d B | %d B | %v | %.2f | %v | %v | %.0f",
		m.kept, m.rss0>>20, m.rss1>>20, m.perTask(), per(m.held0, m.held1), per(m.goal0, m.goal1),
		m.cpuPerReq().Round(100*time.Nanosecond), m.cyclesPerK(), m.gcCPUPerReq().Round(10*time.Nanosecond),
		(m.gcPause / time.Duration(max(m.requests, 1))).Round(time.Nanosecond), float64(m.requests)/m.elapsed.Seconds())
}

func gogcOf(got map[string][]retained) string {
	var seen []string
	for _, ms := range got {
		for _, m := range ms {
			if !slices.Contains(seen, m.gogc) {
				seen = append(seen, m.gogc)
			}
		}
	}
	slices.Sort(seen)
	return strings.Join(seen, ", ")
}

// measureRetain starts the server command bin on addr, measures it and
// stops it.
func measureRetain(ctx context.Context, bin, addr string, warm, n, conns, cycles int, settle, limit time.Duration) (retained, error) {
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		return retained{}, fmt.Errorf("something already listens on %s", addr)
	}
	argv := append(strings.Fields(bin), "--addr", addr, "--retention", "1h", "--log-level", "warn")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "GODEBUG="+strings.TrimPrefix(os.Getenv("GODEBUG")+",gctrace=1", ","))
	cmd.Stdout = io.Discard
	cmd.SysProcAttr = dieWithParent()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return retained{}, err
	}
	if err := cmd.Start(); err != nil {
		return retained{}, fmt.Errorf("start %q: %w", bin, err)
	}
	trace := &gcTrace{}
	traced := make(chan struct{})
	go func() {
		defer close(traced)
		trace.read(stderr, os.Stderr)
	}()
	defer func() {
		_ = cmd.Process.Kill()
		<-traced // the pipe closes when the process is gone
		_ = cmd.Wait()
	}()
	if err := awaitListening(addr); err != nil {
		return retained{}, err
	}
	pid := cmd.Process.Pid
	req := request(addr, "/", "SendMessage", "1.0", "hello")
	fill := func(count int) (result, error) {
		res, err := load(ctx, addr, req, conns, limit, count)
		switch {
		case err != nil:
			return res, err
		case res.Errors > 0 || res.Refused > 0:
			return res, fmt.Errorf("%d of %d requests failed, %d refused", res.Errors, res.Requests, res.Refused)
		case res.Requests < count:
			return res, fmt.Errorf("%d of %d requests sent in %v", res.Requests, count, limit)
		}
		return res, nil
	}
	if _, err := fill(warm); err != nil {
		return retained{}, fmt.Errorf("warm-up: %w", err)
	}
	var m retained
	list := []byte(fmt.Sprintf("POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nContent-Length: %d\r\n\r\n%s",
		addr, len(listBody), listBody))
	read := func() (rss, goal, held int64, kept int, err error) {
		// Through the GC cycles in batches, each a few seconds at most.
		start, _ := trace.total()
		for batch := 0; ; batch++ {
			if c, _ := trace.total(); c-start >= cycles {
				break
			}
			if batch == 100 {
				return 0, 0, 0, 0, fmt.Errorf("%d GC cycles not reached in 100 batches of ListTasks", cycles)
			}
			if _, err = load(ctx, addr, list, conns, limit, 20_000); err != nil {
				return
			}
		}
		time.Sleep(settle)
		if rss, _, err = memory(pid); err != nil {
			return
		}
		var met map[string]float64
		if met, err = scrape(addr); err != nil {
			return
		}
		goal = int64(met["go_memstats_next_gc_bytes"])
		held = int64(met["go_memstats_heap_sys_bytes"] - met["go_memstats_heap_released_bytes"])
		m.gogc = strconv.FormatFloat(met["go_gc_gogc_percent"], 'f', -1, 64)
		kept, err = countTasks(addr)
		return
	}
	rss0, goal0, held0, kept0, err := read()
	if err != nil {
		return m, err
	}
	cycles0, gc0 := trace.total()
	pause0, err := scrapePause(addr)
	if err != nil {
		return m, err
	}
	cpu0, err := cpuTime(pid)
	if err != nil {
		return m, err
	}
	res, err := fill(n)
	if err != nil {
		return m, fmt.Errorf("fill: %w", err)
	}
	cpu1, err := cpuTime(pid)
	if err != nil {
		return m, err
	}
	cycles1, gc1 := trace.total()
	pause1, err := scrapePause(addr)
	if err != nil {
		return m, err
	}
	rss1, goal1, held1, kept1, err := read()
	if err != nil {
		return m, err
	}
	m.kept, m.rss0, m.rss1, m.goal0, m.goal1, m.held0, m.held1 = kept1-kept0, rss0, rss1, goal0, goal1, held0, held1
	m.requests, m.elapsed = res.Requests, res.Elapsed
	m.cycles, m.cpu, m.gcCPU, m.gcPause = cycles1-cycles0, cpu1-cpu0, gc1-gc0, pause1-pause0
	return m, nil
}

// listBody is a ListTasks of one task: a read that keeps nothing.
const listBody = `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"pageSize":1}}`

// scrapePause reads the GC's stop-the-world time so far from /metrics.
func scrapePause(addr string) (time.Duration, error) {
	met, err := scrape(addr)
	return time.Duration(met["go_gc_duration_seconds_sum"] * 1e9), err
}

// gcTrace sums the runtime's GC trace lines (GODEBUG=gctrace=1) read from
// a server's stderr.
type gcTrace struct {
	mu     sync.Mutex
	cycles int
	cpu    time.Duration
}

func (g *gcTrace) total() (int, time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.cycles, g.cpu
}

// read consumes r until it ends, passing the lines that are not GC traces
// to other.
func (g *gcTrace) read(r io.Reader, other io.Writer) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		cpu, ok := parseGCTrace(line)
		if !ok {
			fmt.Fprintln(other, line)
			continue
		}
		g.mu.Lock()
		g.cycles++
		g.cpu += cpu
		g.mu.Unlock()
	}
}

// parseGCTrace reads the CPU time of one GC cycle from its trace line:
//
//	gc 7 @0.512s 3%: 0.02+1.1+0.03 ms clock, 0.05+0.4/1.0/0.3+0.06 ms cpu, 4->4->2 MB, ...
//
// the stop-the-world phases, assist, background and idle marking.
func parseGCTrace(line string) (time.Duration, bool) {
	if !strings.HasPrefix(line, "gc ") {
		return 0, false
	}
	for _, part := range strings.Split(line, ", ") {
		f, ok := strings.CutSuffix(part, " ms cpu")
		if !ok {
			continue
		}
		var ms float64
		for _, x := range strings.FieldsFunc(f, func(r rune) bool { return r == '+' || r == '/' }) {
			v, err := strconv.ParseFloat(x, 64)
			if err != nil {
				return 0, false
			}
			ms += v
		}
		return time.Duration(ms * float64(time.Millisecond)), true
	}
	return 0, false
}

// scrape reads the server's Prometheus /metrics: the value of every
// sample without labels.
func scrape(addr string) (map[string]float64, error) {
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("/metrics: %s", resp.Status)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), " ")
		if !ok || strings.HasPrefix(name, "#") || strings.Contains(name, "{") {
			continue
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			out[name] = f
		}
	}
	return out, sc.Err()
}

// countTasks returns how many tasks the server holds, by ListTasks.
func countTasks(addr string) (int, error) {
	c := http.Client{Timeout: 10 * time.Second}
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/", strings.NewReader(listBody))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var out struct {
		Result *struct {
			TotalSize int `json:"totalSize"`
		} `json:"result"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return 0, fmt.Errorf("ListTasks: %w", err)
	}
	if out.Result == nil {
		return 0, errors.New("ListTasks failed: " + string(out.Error))
	}
	return out.Result.TotalSize, nil
}
