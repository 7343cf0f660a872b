#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#define N (1<<19) /* floats: 2 MB */
static float *buf; static atomic_int turn; static int rounds = 200;
static double now(void){struct timespec t; clock_gettime(CLOCK_MONOTONIC,&t); return t.tv_sec+t.tv_nsec*1e-9;}
static void pin(int c){cpu_set_t s; CPU_ZERO(&s); CPU_SET(c,&s); pthread_setaffinity_np(pthread_self(),sizeof s,&s);}
static void touch(void){ for (int i=0;i<N;i++) buf[i]=buf[i]*0.5f+1.0f; }
static void *other(void *a){ (void)a; pin(1); for(int r=0;r<rounds;r++){ while(atomic_load(&turn)!=1); touch(); atomic_store(&turn,0);} return NULL; }
int main(int argc,char**argv){ int mode = argc>1? atoi(argv[1]):0; buf=calloc(N,4); pin(0);
  if(mode==0){ /* alternate between cores */
    pthread_t t; pthread_create(&t,NULL,other,NULL); double t0=now();
    for(int r=0;r<rounds;r++){ while(atomic_load(&turn)!=0); touch(); atomic_store(&turn,1);} while(atomic_load(&turn)!=0); double t1=now(); pthread_join(t,NULL);
    printf("handoff %.1f us/touch\n",(t1-t0)/(2*rounds)*1e6);
  } else { double t0=now(); for(int r=0;r<2*rounds;r++) touch(); printf("local %.1f us/touch\n",(now()-t0)/(2*rounds)*1e6); }
  return 0; }
