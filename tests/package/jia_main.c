/* A JIAJIA program built against the installed package with pkg-config only:
   `cc jia_main.c $(pkg-config --cflags --libs mpidsm-jia)`, run without
   LD_LIBRARY_PATH. */
#include <jia.h>
#include <stdio.h>

int main(int argc, char** argv) {
  jia_init(argc, argv);
  int* shared = (int*)jia_alloc((int)sizeof(int));
  if (jiapid == 0) *shared = 42;
  jia_barrier();
  const int status = *shared == 42 ? 0 : 1;
  printf("pkg-config JIAJIA consumer: %d host(s)%s\n", jiahosts, status ? ": FAILED" : "");
  jia_exit();
  return status;
}
