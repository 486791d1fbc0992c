// Command mqtt-go-peer is the Go side of bench/mqtt-vs-go.sh: the closed
// loop of krylovsk/mqtt-benchmark (the Go tool issue 36 compares expc with),
// rebuilt on the same library, eclipse/paho.mqtt.golang.
//
// It mirrors mqtt-benchmark's publish loop, per client: a generator goroutine
// allocates a fresh payload of -size bytes for every message and hands it over
// an unbuffered channel; the publisher stamps it, calls Publish and waits for
// the token (window 1: the next message goes out once the PUBACK is in); a
// collector goroutine receives every finished message and keeps its latency.
// Clients connect as mqtt-benchmark's do (clean session, auto-reconnect,
// paho's defaults otherwise: 30 s keep-alive, TCP_NODELAY from Go's net).
//
// Why not the original: its module cannot be fetched from the module proxy
// this repository's benchmarks use, and the comparison needs three things it
// does not do. It times each client from before its connect to its last ack
// over a fixed count; here every client connects first and the measured
// window is a fixed time after that, as in expc's throughput example. It
// reports no CPU; here the window's CPU of this process (getrusage) and of
// the broker (-broker-pid, /proc/PID/task/*/schedstat, as expc's example
// reads it) is printed beside the rate. It sends every client's messages to
// one topic; here client i publishes to bench/i, as expc's devices do.
//
//	go run . -broker tcp://127.0.0.1:PORT -clients 100 -seconds 10 -size 100 -qos 1 [-broker-pid PID]
//
// Prints one key=value line with the same keys as expc's throughput example.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
)

// message is mqtt-benchmark's Message: what the generator makes and the collector books.
type message struct {
	topic     string
	qos       byte
	payload   []byte
	sent      time.Time
	delivered time.Time
	failed    bool
}

// result is what one client's collector counted.
type result struct {
	acked     uint64 // acknowledged within the window
	published uint64
	failed    uint64
	latencyUs []uint32
}

type config struct {
	broker    string
	clients   int
	seconds   float64
	size      int
	qos       int
	wait      time.Duration
	brokerPid int
}

func main() {
	var c config
	var waitMs int
	flag.StringVar(&c.broker, "broker", "tcp://127.0.0.1:1883", "MQTT broker as tcp://host:port")
	flag.IntVar(&c.clients, "clients", 10, "clients (devices), one connection each")
	flag.Float64Var(&c.seconds, "seconds", 10, "measured window, after every client connected")
	flag.IntVar(&c.size, "size", 100, "payload bytes")
	flag.IntVar(&c.qos, "qos", 1, "QoS of every message")
	flag.IntVar(&waitMs, "wait", 60000, "how long a publish token may take (ms), as mqtt-benchmark's -wait")
	flag.IntVar(&c.brokerPid, "broker-pid", 0, "the broker's process id, for its CPU (0: not measured)")
	flag.Parse()
	c.wait = time.Duration(waitMs) * time.Millisecond
	if c.clients < 1 || c.seconds <= 0 || c.size < 0 || c.qos < 0 || c.qos > 2 {
		fmt.Fprintln(os.Stderr, "mqtt-go-peer: -clients and -seconds must be positive, -qos 0..2")
		os.Exit(2)
	}
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "mqtt-go-peer:", err)
		os.Exit(1)
	}
}

func run(c config) error {
	clients, err := connectAll(c)
	if err != nil {
		return err
	}
	stop := make(chan struct{})
	results := make(chan result, c.clients)
	cpu0, err := sample(c.brokerPid)
	if err != nil {
		return err
	}
	start := time.Now()
	end := start.Add(time.Duration(c.seconds * float64(time.Second)))
	for i, cli := range clients {
		go runClient(cli, fmt.Sprintf("bench/%d", i), c, end, stop, results)
	}
	time.Sleep(time.Until(end))
	cpu1, err := sample(c.brokerPid)
	if err != nil {
		return err
	}
	elapsed := time.Since(start)
	close(stop)
	var total result
	for range clients {
		r := <-results
		total.acked += r.acked
		total.published += r.published
		total.failed += r.failed
		total.latencyUs = append(total.latencyUs, r.latencyUs...)
	}
	for _, cli := range clients {
		cli.Disconnect(100)
	}
	fmt.Println(line(c, total, elapsed, cpu1.since(cpu0)))
	return nil
}

// connectAll connects every client, at most 50 at a time (as expc's example
// does: a burst of connects can overflow the broker's listen backlog).
func connectAll(c config) ([]mqtt.Client, error) {
	const batch = 50
	clients := make([]mqtt.Client, 0, c.clients)
	for first := 0; first < c.clients; first += batch {
		var tokens []mqtt.Token
		for i := first; i < first+batch && i < c.clients; i++ {
			opts := mqtt.NewClientOptions().
				AddBroker(c.broker).
				SetClientID(fmt.Sprintf("go-peer-%d", i)).
				SetCleanSession(true).
				SetAutoReconnect(true).
				SetKeepAlive(30 * time.Second)
			cli := mqtt.NewClient(opts)
			clients = append(clients, cli)
			tokens = append(tokens, cli.Connect())
		}
		for _, t := range tokens {
			if !t.WaitTimeout(10 * time.Second) {
				return nil, fmt.Errorf("a client did not connect within 10 s")
			}
			if t.Error() != nil {
				return nil, t.Error()
			}
		}
	}
	return clients, nil
}

// runClient is mqtt-benchmark's Client.Run: generator, publisher and
// collector, ending when stop closes instead of after a count.
func runClient(cli mqtt.Client, topic string, c config, end time.Time, stop <-chan struct{}, res chan<- result) {
	newMsgs := make(chan *message)
	pubMsgs := make(chan *message)
	doneGen := make(chan bool)
	donePub := make(chan bool)
	go generate(topic, c, newMsgs, doneGen, stop)
	go publish(cli, c.wait, newMsgs, pubMsgs, doneGen, donePub)
	var r result
	for {
		select {
		case m := <-pubMsgs:
			r.published++
			if m.failed {
				r.failed++
			} else if !m.delivered.After(end) {
				r.acked++
				r.latencyUs = append(r.latencyUs, uint32(m.delivered.Sub(m.sent).Microseconds()))
			}
		case <-donePub:
			res <- r
			return
		}
	}
}

func generate(topic string, c config, out chan<- *message, done chan<- bool, stop <-chan struct{}) {
	for {
		m := &message{topic: topic, qos: byte(c.qos), payload: make([]byte, c.size)}
		select {
		case out <- m:
		case <-stop:
			done <- true
			return
		}
	}
}

func publish(cli mqtt.Client, wait time.Duration, in <-chan *message, out chan<- *message, doneGen <-chan bool, donePub chan<- bool) {
	for {
		select {
		case m := <-in:
			m.sent = time.Now()
			token := cli.Publish(m.topic, m.qos, false, m.payload)
			if !token.WaitTimeout(wait) || token.Error() != nil {
				m.failed = true
			} else {
				m.delivered = time.Now()
			}
			out <- m
		case <-doneGen:
			donePub <- true
			return
		}
	}
}

// cpu is what the window used, in nanoseconds.
type cpu struct {
	self        uint64
	broker      uint64
	brokerKnown bool
	hostBusy    uint64
	ctxt        uint64
}

func (a cpu) since(b cpu) cpu {
	return cpu{a.self - b.self, a.broker - b.broker, a.brokerKnown && b.brokerKnown, a.hostBusy - b.hostBusy, a.ctxt - b.ctxt}
}

func sample(brokerPid int) (cpu, error) {
	var s cpu
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return s, err
	}
	s.self = uint64(ru.Utime.Nano() + ru.Stime.Nano())
	if brokerPid > 0 {
		ns, err := threadsRunNs(brokerPid)
		if err != nil {
			return s, err
		}
		s.broker, s.brokerKnown = ns, true
	}
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		return s, err
	}
	for _, l := range strings.Split(string(stat), "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) >= 9 && f[0] == "cpu":
			var total, idle uint64
			for i := 1; i <= 8; i++ {
				v, _ := strconv.ParseUint(f[i], 10, 64)
				total += v
				if i == 4 || i == 5 { // idle, iowait
					idle += v
				}
			}
			// USER_HZ is 100 on Linux whatever the kernel's tick.
			s.hostBusy = (total - idle) * 10_000_000
		case len(f) == 2 && f[0] == "ctxt":
			s.ctxt, _ = strconv.ParseUint(f[1], 10, 64)
		}
	}
	return s, nil
}

// threadsRunNs sums the time on CPU of every thread of pid (schedstat's first field).
func threadsRunNs(pid int) (uint64, error) {
	paths, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(paths) == 0 {
		return 0, fmt.Errorf("no schedstat for process %d", pid)
	}
	var sum uint64
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // a thread that ended meanwhile
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			v, _ := strconv.ParseUint(f[0], 10, 64)
			sum += v
		}
	}
	return sum, nil
}

func line(c config, r result, elapsed time.Duration, used cpu) string {
	secs := elapsed.Seconds()
	n := float64(r.acked)
	if n < 1 {
		n = 1
	}
	lat := r.latencyUs
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	q := func(p float64) uint32 {
		if len(lat) == 0 {
			return 0
		}
		return lat[int(float64(len(lat)-1)*p+0.5)]
	}
	perMsg := func(ns uint64) string { return fmt.Sprintf("%.2f", float64(ns)/1e3/n) }
	pct := func(ns uint64) string { return fmt.Sprintf("%.0f", float64(ns)/1e9/secs*100) }
	brokerPerMsg, brokerPct, other := "-", "-", used.hostBusy-min(used.hostBusy, used.self)
	if used.brokerKnown {
		brokerPerMsg, brokerPct = perMsg(used.broker), pct(used.broker)
		other -= min(other, used.broker)
	}
	return fmt.Sprintf("broker=mosquitto api=go-paho devices=%d window=1 qos=%d payload=%dB seconds=%.2f "+
		"acked=%d msg_per_s=%.0f ack_p50_us=%d ack_p99_us=%d ack_max_us=%d lost=%d "+
		"runner_cpu_us_per_msg=%s broker_cpu_us_per_msg=%s runner_cpu_pct=%s broker_cpu_pct=%s "+
		"other_cpu_pct=%s ctx_switches_per_msg=%.2f published=%d",
		c.clients, c.qos, c.size, secs, r.acked, float64(r.acked)/secs, q(0.5), q(0.99), q(1),
		r.failed, perMsg(used.self), brokerPerMsg, pct(used.self), brokerPct, pct(other),
		float64(used.ctxt)/n, r.published)
}
