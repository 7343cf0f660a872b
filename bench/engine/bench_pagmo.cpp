// bench_pagmo.cpp -- pagmo::nsga2 on the runs of bench_engine.c (same
// operators: cr 0.9, eta_c 20, m 1/n, eta_m 20), wall time median of 5 and
// the mean final first-front hypervolume (computed with this project's
// nsga_hv so both sides are measured alike); then pagmo's
// fast_non_dominated_sorting on the same random points as bench_engine.c;
// last, the distance of DTLZ2's final front to the unit sphere, seeds 1..10.
#include <pagmo/algorithms/nsga2.hpp>
#include <pagmo/population.hpp>
#include <pagmo/problems/dtlz.hpp>
#include <pagmo/problems/zdt.hpp>
#include <pagmo/utils/multi_objective.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

extern "C" {
#include "nsga.h"
}

static double now()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

static void run(const char *name, pagmo::problem (*make)(), unsigned pop, unsigned gens, unsigned nvar)
{
    std::vector<double> t;
    double hv = 0;
    for (unsigned r = 0; r < 5; r++) {
        double t0 = now();
        pagmo::problem prob = make();
        pagmo::population p{prob, pop, r + 1};
        pagmo::algorithm algo{pagmo::nsga2(gens, 0.9, 20., 1.0 / nvar, 20., r + 1)};
        p = algo.evolve(p);
        t.push_back(now() - t0);
        auto f = p.get_f();
        auto fronts = std::get<0>(pagmo::fast_non_dominated_sorting(f));
        unsigned m = (unsigned)f[0].size();
        std::vector<double> pts, ref(m, 1.1);
        for (auto i : fronts[0]) pts.insert(pts.end(), f[i].begin(), f[i].end());
        hv += nsga_hv((int)fronts[0].size(), (int)m, pts.data(), ref.data()) / 5;
    }
    std::sort(t.begin(), t.end());
    std::printf("pagmo  %-6s pop %4u x %3u gens:              median %.3f s, mean final hv %.5f\n", name, pop, gens,
                t[2], hv);
}

static pagmo::problem zdt1() { return pagmo::problem{pagmo::zdt(1, 30)}; }
static pagmo::problem dtlz2() { return pagmo::problem{pagmo::dtlz(2, 12, 3)}; }

static void sorts(int n)
{
    std::vector<std::vector<double>> pts(n, std::vector<double>(3));
    unsigned s = 12345;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) {
            s = s * 1664525u + 1013904223u;
            pts[i][k] = (s >> 8) / 16777216.0;
        }
    std::vector<double> t;
    for (int r = 0; r < 5; r++) {
        double t0 = now();
        auto res = pagmo::fast_non_dominated_sorting(pts);
        t.push_back(now() - t0);
    }
    std::sort(t.begin(), t.end());
    std::printf("pagmo fast_non_dominated_sorting %5d points: %.4f s\n", n, t[2]);
}

static void sphere()
{
    for (unsigned seed = 1; seed <= 10; seed++) {
        pagmo::population p{dtlz2(), 100, seed};
        pagmo::algorithm algo{pagmo::nsga2(250, 0.9, 20., 1.0 / 12, 20., seed)};
        p = algo.evolve(p);
        auto f = p.get_f();
        auto front = std::get<0>(pagmo::fast_non_dominated_sorting(f))[0];
        double worst = 0, mean = 0;
        int far = 0;
        for (auto i : front) {
            double d = std::fabs(std::sqrt(f[i][0] * f[i][0] + f[i][1] * f[i][1] + f[i][2] * f[i][2]) - 1);
            worst = std::max(worst, d), mean += d, far += d > 0.02;
        }
        std::printf("pagmo  dtlz2 pop 100 x 250 seed %2u: front %3zu, |r - 1| worst %.4f mean %.5f, %2d beyond 0.02\n",
                    seed, front.size(), worst, mean / front.size(), far);
    }
}

int main()
{
    run("zdt1", zdt1, 100, 250, 30);
    run("dtlz2", dtlz2, 1000, 100, 12);
    sorts(2000);
    sorts(20000);
    sphere();
    return 0;
}
