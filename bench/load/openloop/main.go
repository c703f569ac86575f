// Open-loop HTTP load generator of `npm run bench -- --overload` (bench/load/openloop.mjs builds
// and runs it): arrivals at a fixed rate whatever the answers, as independent users arrive. Each
// arrival has a scheduled time; its latency is measured from that time (no coordinated omission),
// it has a deadline counted from it too, and it is never retried. At most -conns requests are in
// flight, one per worker, each worker on its own keep-alive connection: an arrival that finds every
// worker busy waits in a bounded queue, and one whose deadline passes there is counted as a timeout
// without being sent. Prints a JSON summary (stats.go) on stdout. Standard library only.
//
//	openloop -base http://127.0.0.1:PORT -rate 12000 -duration 15s -conns 8000 -users 20000 \
//	         [-mix read=5,list=2,create=2,feed=1 -feed-token TOKEN -tag RUN]
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The request classes a mix draws from: a user by id, a page of users, a create with a unique
// email, and a long poll of the change feed from the newest token seen.
var classNames = []string{"read", "list", "create", "feed"}

type arrival struct {
	class int
	id    int
	at    time.Time
}

type config struct {
	base      string
	rate      float64
	duration  time.Duration
	conns     int
	timeout   time.Duration
	good      time.Duration
	users     int
	weights   []int
	feedWait  int
	tag       string
	role      string
	feedToken atomic.Value
	created   atomic.Int64
}

func parseMix(text string) ([]int, error) {
	weights := make([]int, len(classNames))
	for _, part := range strings.Split(text, ",") {
		name, value, _ := strings.Cut(part, "=")
		n, err := strconv.Atoi(value)
		found := false
		for i, known := range classNames {
			if known == name && err == nil && n >= 0 {
				weights[i], found = n, true
			}
		}
		if !found {
			return nil, fmt.Errorf("bad -mix entry %q (classes: %s)", part, strings.Join(classNames, ", "))
		}
	}
	return weights, nil
}

func (c *config) deadline(class int) time.Duration {
	if classNames[class] == "feed" {
		return time.Duration(c.feedWait)*time.Second + c.timeout
	}
	return c.timeout
}

// request builds an arrival's request. A GET gets an empty body that is neither nil nor
// http.NoBody: Go's transport then never resends it (it resends a GET that failed on a reused
// connection), and it still goes out without a body.
func (c *config) request(ctx context.Context, a arrival) (*http.Request, error) {
	req, err := c.build(ctx, a)
	if err == nil && req.Method == "GET" {
		req.Body = io.NopCloser(strings.NewReader(""))
	}
	return req, err
}

func (c *config) build(ctx context.Context, a arrival) (*http.Request, error) {
	switch classNames[a.class] {
	case "list":
		return http.NewRequestWithContext(ctx, "GET", c.base+"/users?limit=20", nil)
	case "create":
		n := c.created.Add(1)
		body := fmt.Sprintf(`{"name":"Overload %d","email":"overload-%s-%d@example.com","role":"%s"}`, n, c.tag, n, c.role)
		req, err := http.NewRequestWithContext(ctx, "POST", c.base+"/users", bytes.NewBufferString(body))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
		}
		return req, err
	case "feed":
		query := fmt.Sprintf("/users/changes?limit=100&wait=%d", c.feedWait)
		if token, _ := c.feedToken.Load().(string); token != "" {
			query += "&after=" + url.QueryEscape(token)
		}
		return http.NewRequestWithContext(ctx, "GET", c.base+query, nil)
	}
	return http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s/users/%d", c.base, a.id), nil)
}

// send runs one arrival to its end and records what became of it.
func (c *config) send(stop context.Context, client *http.Client, a arrival, s *stats) {
	deadline := a.at.Add(c.deadline(a.class))
	if time.Now().After(deadline) {
		s.record(a, outcome{kind: expired})
		return
	}
	ctx, cancel := context.WithDeadline(stop, deadline)
	defer cancel()
	req, err := c.request(ctx, a)
	if err != nil {
		s.record(a, outcome{kind: failed, err: err.Error()})
		return
	}
	res, err := client.Do(req)
	if err == nil {
		if classNames[a.class] == "feed" && res.StatusCode == 200 {
			var page struct{ Next string }
			if json.NewDecoder(res.Body).Decode(&page) == nil && page.Next != "" {
				c.feedToken.Store(page.Next)
			}
		}
		_, err = io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	latency := time.Since(a.at)
	switch {
	case err == nil:
		s.record(a, outcome{kind: answered, status: res.StatusCode, latency: latency, good: latency <= c.good})
	case stop.Err() != nil:
		s.record(a, outcome{kind: cut})
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || !time.Now().Before(deadline):
		// The second test: a dial cut at the deadline can return before ctx's own timer fires.
		s.record(a, outcome{kind: timedOut})
	default:
		var urlError *url.Error
		if errors.As(err, &urlError) {
			err = urlError.Err
		}
		s.record(a, outcome{kind: failed, err: err.Error()})
	}
}

// schedule queues rate × duration arrivals at their times, in 1 ms batches, then closes the queue.
func (c *config) schedule(queue chan<- arrival, s *stats, seed int64) {
	rng := rand.New(rand.NewSource(seed))
	total := 0
	for _, w := range c.weights {
		total += w
	}
	pick := func() int {
		n := rng.Intn(total)
		for i, w := range c.weights {
			if n < w {
				return i
			}
			n -= w
		}
		return 0
	}
	count := int(c.rate * c.duration.Seconds())
	for i := 0; i < count; {
		due := int(time.Since(s.start).Seconds()*c.rate) + 1
		if due > count {
			due = count
		}
		for ; i < due; i++ {
			a := arrival{class: pick(), id: 1 + rng.Intn(c.users), at: s.start.Add(time.Duration(float64(i) / c.rate * 1e9))}
			select {
			case queue <- a:
			default:
				s.record(a, outcome{kind: expired})
			}
		}
		time.Sleep(time.Millisecond)
	}
	close(queue)
}

func main() {
	c := &config{}
	flag.StringVar(&c.base, "base", "", "http://127.0.0.1:PORT of the service")
	flag.Float64Var(&c.rate, "rate", 1000, "arrivals per second")
	flag.DurationVar(&c.duration, "duration", 10*time.Second, "how long arrivals are sent")
	flag.IntVar(&c.conns, "conns", 1000, "most requests in flight (and connections), at most 8000")
	flag.DurationVar(&c.timeout, "timeout", 2*time.Second, "each request's deadline from its arrival")
	flag.DurationVar(&c.good, "good", 250*time.Millisecond, "a 2xx answered within this counts as goodput")
	flag.IntVar(&c.users, "users", 1000, "ids drawn from 1..users")
	mix := flag.String("mix", "read=1", "weights of the classes read, list, create, feed")
	flag.IntVar(&c.feedWait, "feed-wait", 10, "wait= of a feed long poll, in seconds")
	token := flag.String("feed-token", "", "the feed token the long polls start after")
	flag.StringVar(&c.tag, "tag", strconv.FormatInt(time.Now().UnixNano(), 36), "makes created emails unique")
	flag.StringVar(&c.role, "role", "bench", "role of created users")
	seed := flag.Int64("seed", 7, "seed of the ids and the mix")
	flag.Parse()
	target, err := url.Parse(c.base)
	if err != nil || target.Hostname() != "127.0.0.1" {
		fail("refusing -base %q: not http://127.0.0.1:PORT", c.base)
	}
	if c.conns < 1 || c.conns > 8000 || c.rate <= 0 || c.users < 1 {
		fail("-conns must be 1..8000, -rate and -users positive")
	}
	if c.weights, err = parseMix(*mix); err != nil {
		fail("%v", err)
	}
	c.feedToken.Store(*token)

	client := &http.Client{Transport: &http.Transport{
		DialContext:         (&net.Dialer{Timeout: c.timeout}).DialContext,
		MaxConnsPerHost:     c.conns,
		MaxIdleConns:        c.conns,
		MaxIdleConnsPerHost: c.conns,
		DisableCompression:  true,
	}}
	s := newStats(c)
	// Everything still in flight this long after the last arrival is cut (long polls, mostly).
	stop, cancel := context.WithTimeout(context.Background(), c.duration+c.timeout+time.Second)
	defer cancel()
	queue := make(chan arrival, int(c.rate*c.timeout.Seconds())+c.conns)
	var workers sync.WaitGroup
	for w := 0; w < c.conns; w++ {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for a := range queue {
				c.send(stop, client, a, s)
			}
		}()
	}
	c.schedule(queue, s, *seed)
	workers.Wait()
	if err := json.NewEncoder(os.Stdout).Encode(s.summary()); err != nil {
		fail("%v", err)
	}
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "openloop: "+format+"\n", args...)
	os.Exit(2)
}
