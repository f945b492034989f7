package gpu

import (
	"strings"
	"testing"

	"github.com/tritonhost/tritonhost/internal/testenv"
)

// TestIPCHandlesOpenCopyAndClose: memory a client exports opens in the
// server's context of its GPU, at another address, with the allocation's
// size; copies both ways reach the client's memory; closing unmaps it.
func TestIPCHandlesOpenCopyAndClose(t *testing.T) {
	d, path, _ := newDevices(t, MemoryOptions{CUDAPoolBytes: map[int]uint64{0: 0, 1: 0}})
	client := testenv.NewCUDAClient(t, path)
	mem := client.Alloc(1, 1000)
	client.Write(1, mem, []byte("from the client"))
	var h [ipcHandleSize]byte
	copy(h[:], client.IPCHandle(1, mem))

	p, size, err := d.OpenIPCHandle(1, h)
	if err != nil {
		t.Fatal(err)
	}
	if p == mem || size != 1000 {
		t.Errorf("opened at %#x (the client's is %#x), %d bytes: want another mapping of 1000 bytes", p, mem, size)
	}
	got := make([]byte, 15)
	if err := d.CopyToHost(got, p, 1); err != nil || string(got) != "from the client" {
		t.Errorf("CopyToHost: %q %v", got, err)
	}
	if err := d.CopyFromHost(p+500, []byte("from the server"), 1); err != nil {
		t.Fatal(err)
	}
	if got := client.Read(1, mem+500, 15); string(got) != "from the server" {
		t.Errorf("the client reads %q", got)
	}
	if s := testenv.ReadFakeCUDA(t, path); s.LiveIPC != 1 || s.DeviceMismatches != 0 {
		t.Errorf("%+v: want one handle open, every copy in its GPU's context", s)
	}
	if err := d.CloseIPCHandle(1, p); err != nil {
		t.Fatal(err)
	}
	if s := testenv.ReadFakeCUDA(t, path); s.LiveIPC != 0 || s.IPCOpened != 1 {
		t.Errorf("%+v: want the handle closed", s)
	}
	if err := d.CloseIPCHandle(1, p); err == nil || !strings.HasPrefix(err.Error(), "invalid argument (cuIpcCloseMemHandle") {
		t.Errorf("a second close: %v", err)
	}
}

// TestIPCHandlesRefused: a GPU the server does not have, a handle of
// another GPU's memory (the fake's GPUs have no peer access), and bytes
// that are no handle fail with the driver's word first.
func TestIPCHandlesRefused(t *testing.T) {
	d, path, _ := newDevices(t, MemoryOptions{CUDAPoolBytes: map[int]uint64{0: 0, 1: 0}})
	client := testenv.NewCUDAClient(t, path)
	var h [ipcHandleSize]byte
	copy(h[:], client.IPCHandle(0, client.Alloc(0, 64)))
	for _, tc := range []struct {
		what   string
		id     int64
		handle [ipcHandleSize]byte
		want   string
	}{
		{"a GPU the server does not have", 5, h, "invalid device ordinal (not a GPU of this server)"},
		{"a negative GPU", -1, h, "invalid device ordinal"},
		{"memory of another GPU", 1, h, "invalid device ordinal (cuIpcOpenMemHandle: CUDA error 101)"},
		{"not a handle", 0, [ipcHandleSize]byte{1, 2, 3}, "invalid argument (cuIpcOpenMemHandle: CUDA error 1)"},
	} {
		if _, _, err := d.OpenIPCHandle(tc.id, tc.handle); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.what, err, tc.want)
		}
	}
	if s := testenv.ReadFakeCUDA(t, path); s.LiveIPC != 0 || s.IPCOpened != 0 {
		t.Errorf("%+v: a refused handle stays open", s)
	}
}
