//go:build !linux

package pb

import "syscall"

// workerAttr is nil where the kernel has no parent-death signal: there a
// worker ends with its deadline's kill, or with the solve's context.
func workerAttr() *syscall.SysProcAttr { return nil }
