package runlock

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestAcquireExcludes: a second lock on a locked directory is refused,
// naming the holder, until the first is released.
func TestAcquireExcludes(t *testing.T) {
	if !supported {
		t.Skip("no locks on", runtime.GOOS)
	}
	dir := t.TempDir()
	first, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().UTC().Truncate(time.Second)
	_, err = Acquire(dir)
	var inUse *InUseError
	if !errors.Is(err, ErrInUse) || !errors.As(err, &inUse) {
		t.Fatalf("second lock: %v, want ErrInUse", err)
	}
	if inUse.Holder == nil || inUse.Holder.PID != os.Getpid() || inUse.Holder.Started.Before(start.Add(-time.Second)) {
		t.Errorf("holder %+v, want this process (pid %d), started about %v", inUse.Holder, os.Getpid(), start)
	}
	if msg := err.Error(); !strings.Contains(msg, dir) || !strings.Contains(msg, "wait for it to end") {
		t.Errorf("message %q names neither the directory nor what to do", msg)
	}
	if msg, want := err.Error(), "("+filepath.Base(os.Args[0])+" -test."; !strings.Contains(msg, want) {
		t.Errorf("message %q does not show the holder's command, %q...", msg, want)
	}
	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	again, err := Acquire(dir)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	again.Release()
	if err := again.Release(); err != nil {
		t.Errorf("second release: %v", err)
	}
}

// TestLockDiesWithProcess: a process that holds the lock keeps others out
// and, killed, leaves no lock behind.
func TestLockDiesWithProcess(t *testing.T) {
	if dir := os.Getenv("RUNLOCK_HOLD"); dir != "" {
		if _, err := Acquire(dir); err != nil {
			os.Stdout.WriteString("error: " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString("locked\n")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	if !supported {
		t.Skip("no locks on", runtime.GOOS)
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockDiesWithProcess$")
	cmd.Env = append(os.Environ(), "RUNLOCK_HOLD="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "locked\n" {
		t.Fatalf("helper: %q, %v", line, err)
	}
	_, err = Acquire(dir)
	var inUse *InUseError
	if !errors.As(err, &inUse) || inUse.Holder == nil || inUse.Holder.PID != cmd.Process.Pid {
		t.Fatalf("lock held by pid %d: %v, want it refused naming that pid", cmd.Process.Pid, err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	l, err := Acquire(dir)
	if err != nil {
		t.Fatalf("lock after its holder was killed: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
}

// TestCommandLine: a holder's command is shown by its program's base name
// and cut short, on a rune's boundary, after 80 bytes.
func TestCommandLine(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "command unknown"},
		{[]string{"/usr/local/bin/pwe", "run", "nightly.yaml"}, "pwe run nightly.yaml"},
		{[]string{"pwe", "fit", "--counts", strings.Repeat("é", 40)}, "pwe fit --counts " + strings.Repeat("é", 30) + "..."},
	} {
		if got := commandLine(c.args); got != c.want {
			t.Errorf("commandLine(%q) = %q, want %q", c.args, got, c.want)
		}
	}
}
