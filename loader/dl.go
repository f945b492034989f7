package loader

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

// dlerror is per thread, so each call collects its own error in the same C
// call (a goroutine may move between threads between cgo calls).
static void* thost_dlopen(const char* path, int global, char** err) {
  void* h = dlopen(path, RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL));
  if (h == NULL) {
    const char* e = dlerror();
    *err = strdup(e ? e : "unknown dlopen error");
  }
  return h;
}

static void* thost_dlsym(void* h, const char* name) {
  dlerror();
  return dlsym(h, name);
}

static int thost_dlclose(void* h, char** err) {
  int rc = dlclose(h);
  if (rc != 0) {
    const char* e = dlerror();
    *err = strdup(e ? e : "unknown dlclose error");
  }
  return rc;
}
*/
import "C"

import (
	"errors"
	"unsafe"
)

// dlopen opens a shared library with RTLD_NOW, and RTLD_LOCAL unless global.
func dlopen(path string, global bool) (unsafe.Pointer, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var cerr *C.char
	h := C.thost_dlopen(cpath, C.int(btoi(global)), &cerr)
	if h == nil {
		defer C.free(unsafe.Pointer(cerr))
		return nil, errors.New(C.GoString(cerr))
	}
	return h, nil
}

// dlsym returns the address of a symbol, or nil if the library lacks it.
func dlsym(h unsafe.Pointer, name string) unsafe.Pointer {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	return C.thost_dlsym(h, cname)
}

// dlclose closes a library opened by dlopen.
func dlclose(h unsafe.Pointer) error {
	var cerr *C.char
	if C.thost_dlclose(h, &cerr) != 0 {
		defer C.free(unsafe.Pointer(cerr))
		return errors.New(C.GoString(cerr))
	}
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
