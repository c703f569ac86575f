// What became of each arrival, per class and per second of arrival, and the JSON summary the
// generator prints: counts by outcome and status, goodput, latency percentiles of 2xx and 503
// answers (from the scheduled arrival), and the generator's own CPU time.
package main

import (
	"math"
	"sort"
	"sync"
	"syscall"
	"time"
)

type kind int

const (
	answered kind = iota
	timedOut      // its deadline passed before the answer
	expired       // its deadline passed while it waited for a free connection: never sent
	failed        // a connection error (refused, reset, ...)
	cut           // still in flight when the run ended (long polls)
)

type outcome struct {
	kind    kind
	status  int
	latency time.Duration
	good    bool
	err     string // failed: what went wrong, without the URL
}

type counts struct {
	Offered          int            `json:"offered"`
	Sent             int            `json:"sent"`
	Statuses         map[int]int    `json:"statuses"`
	Timeouts         int            `json:"timeouts"`
	Expired          int            `json:"expiredUnsent"`
	ConnectionErrors int            `json:"connectionErrors"`
	Cut              int            `json:"cutAtEnd"`
	Good             int            `json:"good"`
	ok               []float64      // ms of 2xx answers
	shed             []float64      // ms of 503 answers
	errors           map[string]int // a few error messages, for the report
}

type second struct {
	Sent     int `json:"sent"`
	Good     int `json:"good"`
	OK       int `json:"ok"`
	Shed     int `json:"shed"`
	Timeouts int `json:"timeouts"`
	Errors   int `json:"errors"`
}

type stats struct {
	mu      sync.Mutex
	c       *config
	start   time.Time
	classes []*counts
	series  []second
}

func newCounts() *counts {
	return &counts{Statuses: map[int]int{}, errors: map[string]int{}}
}

func newStats(c *config) *stats {
	s := &stats{c: c, start: time.Now(), series: make([]second, max(1, int(math.Ceil(c.duration.Seconds()))))}
	for range classNames {
		s.classes = append(s.classes, newCounts())
	}
	return s
}

func (s *stats) record(a arrival, o outcome) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.classes[a.class]
	sec := &s.series[min(len(s.series)-1, int(a.at.Sub(s.start)/time.Second))]
	k.Offered++
	if o.kind != expired {
		k.Sent++
		sec.Sent++
	}
	switch o.kind {
	case answered:
		k.Statuses[o.status]++
		ms := float64(o.latency.Microseconds()) / 1000
		if o.status >= 200 && o.status < 300 {
			k.ok = append(k.ok, ms)
			sec.OK++
			if o.good {
				k.Good++
				sec.Good++
			}
		} else if o.status == 503 {
			k.shed = append(k.shed, ms)
			sec.Shed++
		}
	case timedOut, expired:
		if o.kind == expired {
			k.Expired++
		}
		k.Timeouts++
		sec.Timeouts++
	case failed:
		k.ConnectionErrors++
		sec.Errors++
		if len(k.errors) < 5 || k.errors[o.err] > 0 {
			k.errors[o.err]++
		}
	case cut:
		k.Cut++
	}
}

// percentile by nearest rank of an ascending slice; NaN becomes null through the pointer.
func percentile(sorted []float64, p float64) *float64 {
	if len(sorted) == 0 {
		return nil
	}
	v := sorted[max(0, int(math.Ceil(p/100*float64(len(sorted))))-1)]
	return &v
}

type summary struct {
	*counts
	GoodputPerS float64        `json:"goodputPerS"`
	OKP50Ms     *float64       `json:"okP50Ms"`
	OKP99Ms     *float64       `json:"okP99Ms"`
	ShedP50Ms   *float64       `json:"shedP50Ms"`
	ShedP99Ms   *float64       `json:"shedP99Ms"`
	Errors      map[string]int `json:"errors"`
}

func (s *stats) summarize(k *counts) summary {
	sort.Float64s(k.ok)
	sort.Float64s(k.shed)
	return summary{
		counts:      k,
		GoodputPerS: float64(k.Good) / s.c.duration.Seconds(),
		OKP50Ms:     percentile(k.ok, 50),
		OKP99Ms:     percentile(k.ok, 99),
		ShedP50Ms:   percentile(k.shed, 50),
		ShedP99Ms:   percentile(k.shed, 99),
		Errors:      k.errors,
	}
}

// summary: every class together, each class that was offered, the series, the CPU time.
func (s *stats) summary() map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	all := newCounts()
	classes := map[string]summary{}
	for i, k := range s.classes {
		if k.Offered == 0 {
			continue
		}
		all.Offered += k.Offered
		all.Sent += k.Sent
		all.Timeouts += k.Timeouts
		all.Expired += k.Expired
		all.ConnectionErrors += k.ConnectionErrors
		all.Cut += k.Cut
		all.Good += k.Good
		all.ok = append(all.ok, k.ok...)
		all.shed = append(all.shed, k.shed...)
		for status, n := range k.Statuses {
			all.Statuses[status] += n
		}
		for message, n := range k.errors {
			all.errors[message] += n
		}
		classes[classNames[i]] = s.summarize(k)
	}
	var usage syscall.Rusage
	cpu := math.NaN()
	if syscall.Getrusage(syscall.RUSAGE_SELF, &usage) == nil {
		cpu = time.Duration(usage.Utime.Nano() + usage.Stime.Nano()).Seconds()
	}
	return map[string]any{
		"offeredRate": s.c.rate,
		"durationS":   s.c.duration.Seconds(),
		"conns":       s.c.conns,
		"total":       s.summarize(all),
		"classes":     classes,
		"series":      s.series,
		"cpuS":        cpu,
		"wallS":       time.Since(s.start).Seconds(),
	}
}

func min(a, b int) int {
	if a < b {
		return a
	}
	return b
}

func max(a, b int) int {
	if a > b {
		return a
	}
	return b
}
