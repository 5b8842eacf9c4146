// Prints what libA's dlsym(RTLD_NEXT, "probe_name") found: "B" is right (rtld_next_a.cpp).
#include <cstdio>
extern "C" const char* next_probe_name();
extern "C" int only_in_b();
int main() {
  std::printf("%s\n", only_in_b() ? next_probe_name() : "?");
  return 0;
}
