// See rtld_next_a.cpp.
extern "C" const char* probe_name() { return "B"; }
extern "C" int only_in_b() { return 1; }  // keeps libB linked (--as-needed)
