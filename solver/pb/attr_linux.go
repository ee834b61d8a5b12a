package pb

import "syscall"

// workerAttr makes the kernel kill a PB worker when poolsolve ends in any
// way (a second Ctrl-C exits at once, a crash, kill -9): a worker has no
// deadline of its own and would otherwise search on, orphaned.
func workerAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
