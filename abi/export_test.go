package abi

// BackendThreadsLive is backendThreadsLive, for the tests of package
// abi_test.
var BackendThreadsLive = backendThreadsLive
