package inventory

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// HostMemory is one sample of the host's memory, in bytes, in the shape
// LLooM's node telemetry reports it.
type HostMemory struct {
	TotalBytes     uint64
	AvailableBytes uint64
	FreeBytes      uint64
	// Source says how AvailableBytes was measured: linux-memavailable
	// (as LLooM), macos-vm-stat, or linux-memfree on kernels without
	// MemAvailable.
	Source string
}

// ParseMeminfo reads /proc/meminfo. MemTotal is required; MemAvailable is
// used when present (kernels since 3.14), else MemFree stands in and
// Source says so.
func ParseMeminfo(data []byte) (HostMemory, error) {
	var total, avail, free uint64
	var haveTotal, haveAvail, haveFree bool
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 64*1024)
	for sc.Scan() {
		key, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		var dst *uint64
		var seen *bool
		switch key {
		case "MemTotal":
			dst, seen = &total, &haveTotal
		case "MemAvailable":
			dst, seen = &avail, &haveAvail
		case "MemFree":
			dst, seen = &free, &haveFree
		default:
			continue
		}
		v, err := parseKB(rest)
		if err != nil {
			return HostMemory{}, fmt.Errorf("inventory: /proc/meminfo %s: %w", key, err)
		}
		*dst, *seen = v, true
	}
	if err := sc.Err(); err != nil {
		return HostMemory{}, fmt.Errorf("inventory: /proc/meminfo: %w", err)
	}
	if !haveTotal || total == 0 {
		return HostMemory{}, errors.New("inventory: /proc/meminfo has no MemTotal")
	}
	m := HostMemory{TotalBytes: total, FreeBytes: min(free, total), Source: "linux-memavailable"}
	switch {
	case haveAvail:
		m.AvailableBytes = min(avail, total)
	case haveFree:
		m.AvailableBytes, m.Source = m.FreeBytes, "linux-memfree"
	default:
		return HostMemory{}, errors.New("inventory: /proc/meminfo has neither MemAvailable nor MemFree")
	}
	return m, nil
}

// parseKB reads "  131072000 kB" into bytes.
func parseKB(s string) (uint64, error) {
	f := strings.Fields(s)
	if len(f) == 0 || len(f) > 2 || (len(f) == 2 && f[1] != "kB") {
		return 0, fmt.Errorf("bad value %q", clip(strings.TrimSpace(s)))
	}
	v, err := strconv.ParseUint(f[0], 10, 64)
	if err != nil || v > math.MaxUint64/1024 {
		return 0, fmt.Errorf("bad value %q", clip(strings.TrimSpace(s)))
	}
	if len(f) == 2 {
		v *= 1024
	}
	return v, nil
}

// ParseVMStat reads macOS vm_stat output. Available is free + inactive +
// speculative pages: what the kernel can hand out without paging, a close
// stand-in for the memory-pressure figure LLooM uses. Free is free pages.
func ParseVMStat(data []byte) (availableBytes, freeBytes uint64, err error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 64*1024)
	var page uint64
	pages := map[string]uint64{}
	first := true
	for sc.Scan() {
		line := sc.Text()
		if first {
			first = false
			// "Mach Virtual Memory Statistics: (page size of 16384 bytes)"
			_, after, ok := strings.Cut(line, "page size of ")
			num, _, ok2 := strings.Cut(after, " bytes")
			if !ok || !ok2 {
				return 0, 0, fmt.Errorf("inventory: vm_stat: no page size in %q", clip(line))
			}
			page, err = strconv.ParseUint(num, 10, 64)
			if err != nil || page == 0 || page > 1<<30 {
				return 0, 0, fmt.Errorf("inventory: vm_stat: bad page size %q", clip(num))
			}
			continue
		}
		key, rest, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch key {
		case "Pages free", "Pages inactive", "Pages speculative":
		default:
			continue
		}
		v, perr := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), "."), 10, 64)
		if perr != nil || v > math.MaxUint64/page/4 {
			return 0, 0, fmt.Errorf("inventory: vm_stat %s: bad value %q", key, clip(strings.TrimSpace(rest)))
		}
		pages[key] = v
	}
	if err := sc.Err(); err != nil {
		return 0, 0, fmt.Errorf("inventory: vm_stat: %w", err)
	}
	if first {
		return 0, 0, errors.New("inventory: vm_stat: empty output")
	}
	free, ok := pages["Pages free"]
	if !ok {
		return 0, 0, errors.New("inventory: vm_stat: no \"Pages free\" line")
	}
	avail := free + pages["Pages inactive"] + pages["Pages speculative"]
	return avail * page, free * page, nil
}

// parseMemsize reads `sysctl -n hw.memsize`.
func parseMemsize(out []byte) (uint64, error) {
	s := strings.TrimSpace(string(out))
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || v == 0 {
		return 0, fmt.Errorf("inventory: sysctl hw.memsize: bad value %q", clip(s))
	}
	return v, nil
}

// SampleHostMemory measures the host's memory now: /proc/meminfo on
// Linux, sysctl hw.memsize and vm_stat on macOS, each command bounded by
// timeout (zero means 10s). It is cheap enough to run on every status
// request; the cached inventory is not a telemetry source.
func SampleHostMemory(ctx context.Context, p Prober, timeout time.Duration) (HostMemory, error) {
	if timeout <= 0 {
		timeout = defaultCommandTimeout
	}
	goos, _ := p.Platform()
	switch goos {
	case "linux":
		data, err := p.ReadFile("/proc/meminfo")
		if err != nil {
			return HostMemory{}, fmt.Errorf("inventory: read /proc/meminfo: %w", err)
		}
		return ParseMeminfo(data)
	case "darwin":
		out, err := run(ctx, p, timeout, "sysctl", "-n", "hw.memsize")
		if err != nil {
			return HostMemory{}, err
		}
		total, err := parseMemsize(out)
		if err != nil {
			return HostMemory{}, err
		}
		m := HostMemory{TotalBytes: total, Source: "macos-vm-stat"}
		out, err = run(ctx, p, timeout, "vm_stat")
		if err != nil {
			return HostMemory{}, err
		}
		avail, free, err := ParseVMStat(out)
		if err != nil {
			return HostMemory{}, err
		}
		m.AvailableBytes, m.FreeBytes = min(avail, total), min(free, total)
		return m, nil
	}
	return HostMemory{}, fmt.Errorf("inventory: no memory probe for %s", goos)
}
