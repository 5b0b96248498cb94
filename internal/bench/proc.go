package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTick is the unit of utime and stime in /proc/PID/stat: USER_HZ,
// which is 100 on every Linux architecture Go supports.
const clockTick = 10 * time.Millisecond

// cpuTime is user and system CPU time.
type cpuTime struct{ user, sys time.Duration }

func (c cpuTime) total() time.Duration { return c.user + c.sys }

func (c cpuTime) String() string {
	return fmt.Sprintf("%s (user %s + sys %s)", round(c.total()), round(c.user), round(c.sys))
}

// procCPU returns the user and system CPU time a process has used so far,
// from /proc/PID/stat.
func procCPU(pid int) (user, sys time.Duration, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 > len(s) {
		return 0, 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	f := strings.Fields(s[i+2:]) // f[0] is field 3 (state)
	if len(f) < 13 {
		return 0, 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64) // field 14: utime
	st, err2 := strconv.ParseInt(f[12], 10, 64) // field 15: stime
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("/proc/%d/stat: bad utime/stime", pid)
	}
	return time.Duration(ut) * clockTick, time.Duration(st) * clockTick, nil
}

// vmHWM returns a process's peak resident set size in bytes (VmHWM in
// /proc/PID/status).
func vmHWM(pid int) (int64, error) { return procStatusBytes(pid, "VmHWM") }

// vmRSS returns a process's resident set size in bytes (VmRSS).
func vmRSS(pid int) (int64, error) { return procStatusBytes(pid, "VmRSS") }

// procStatusBytes returns a field of /proc/PID/status given in kB.
func procStatusBytes(pid int, field string) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		v, ok := strings.CutPrefix(sc.Text(), field+":")
		if !ok {
			continue
		}
		fields := strings.Fields(v) // "123456 kB"
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, fmt.Errorf("/proc/%d/status: unexpected %s line %q", pid, field, sc.Text())
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, err
		}
		return kb << 10, nil
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("/proc/%d/status: no %s", pid, field)
}

// selfRusage returns this process's user and system CPU time.
func selfRusage() (user, sys time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

// childRusage returns the user and system CPU time and the peak RSS in
// bytes (ru_maxrss, which Linux reports in KiB) of an exited child.
func childRusage(ps *os.ProcessState) (user, sys time.Duration, maxRSS int64) {
	if ps == nil {
		return 0, 0, 0
	}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		maxRSS = ru.Maxrss << 10
	}
	return ps.UserTime(), ps.SystemTime(), maxRSS
}

// hostBusy returns the CPU time all CPUs of the machine have spent busy
// (not idle or waiting for I/O) since boot, from /proc/stat.
func hostBusy() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return 0
	}
	var busy int64
	for i, v := range f[1:] {
		if i == 3 || i == 4 || i >= 8 { // idle, iowait; guest time is in user already
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0
		}
		busy += n
	}
	return time.Duration(busy) * clockTick
}
