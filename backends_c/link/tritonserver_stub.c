/*
 * tritonserver_stub.c: deliberately empty. Built as a link-time stub
 * libtritonserver.so so that a backend linked against it records
 * DT_NEEDED libtritonserver.so, as Triton's backends do; the host provides
 * the real TRITONSERVER_* / TRITONBACKEND_* functions at run time.
 */
typedef int tritonhost_stub_translation_unit_is_not_empty;
