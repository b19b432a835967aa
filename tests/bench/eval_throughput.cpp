// eval_throughput: candidates evaluated per minute, end to end (compile, check, bench, report),
// through one Evaluator: 16 distinct gemm candidates with parallel compiles (one per core) and
// with parallel_compiles = 1. Benchmarks stay exclusive in both, as they are in a search.
// Then the same through the remote executors, where their daemons are installed: a real sshd on
// 127.0.0.1 (one slot per core) and a real one-node Slurm (a job per candidate, one per core at once;
// then batches of up to 8 candidates per job, as many jobs at once as cores, one candidate at a time
// in each), each running `autocomp eval` on the far side; and the overhead each adds to one
// candidate's evaluation, measured one candidate at a time beside the local evaluation of the same
// candidates (batched: the four in one job, one after another, the wall time shared among them).
#include "eval/evaluator.h"
#include "catalog/repository.h"
#include "slurm_cluster.h"
#include "ssh_daemon.h"

#include <QTemporaryDir>
#include <QThread>

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QEventLoop>

#include <cstdio>

using namespace autocomp;

static double perMinute(EvaluationConfig config, int parallel, const Target &target, const Problem &problem,
                        const QStringList &codes, int *failures)
{
    config.parallelCompiles = parallel;
    Evaluator evaluator(config);
    QEventLoop loop;
    int done = 0;
    QElapsedTimer clock;
    clock.start();
    for (const QString &code : codes) {
        EvalJob *job = evaluator.evaluate(target, problem, code);
        QObject::connect(job, &EvalJob::finished, &loop, [&](const EvalResult &r) {
            // Each failure says why on stderr (the figures stay on stdout).
            if (!r.correct && ++*failures)
                std::fprintf(stderr, "eval_throughput: a %s evaluation failed: %s: %s\n", qPrintable(config.executor),
                             qPrintable(r.status), qPrintable(r.log.left(1500)));
            if (++done == codes.size())
                loop.quit();
        });
    }
    loop.exec();
    return codes.size() / (double(clock.elapsed()) / 60000.0);
}

// Mean wall time of one evaluation, candidates one after another.
static double msPerCandidate(const EvaluationConfig &config, const Target &target, const Problem &problem,
                             const QStringList &codes, int *failures)
{
    double total = 0;
    for (const QString &code : codes)
        total += 60000.0 / perMinute(config, 1, target, problem, {code}, failures);
    return total / codes.size();
}

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    Repository repository;
    QString error;
    const auto target = repository.target(QStringLiteral("cpu"), &error);
    const auto problem = target ? repository.problem(QStringLiteral("cpu"), QStringLiteral("gemm"), &error)
                                : std::nullopt;
    if (!problem) {
        std::fprintf(stderr, "eval_throughput: %s\n", qPrintable(error));
        return 1;
    }
    // Distinct sources (a different comment each) so no compiler cache makes later ones free.
    QStringList codes;
    for (int i = 0; i < 16; ++i)
        codes << QStringLiteral("// candidate %1\n").arg(i) + problem->startCode();
    int failures = 0;
    // Warm the per-machine setup (roofline, vendor baseline) so neither measurement pays for it.
    const EvaluationConfig local;
    perMinute(local, 1, *target, *problem, codes.mid(0, 1), &failures);
    const double parallel = perMinute(local, 0, *target, *problem, codes, &failures);
    const double serial = perMinute(local, 1, *target, *problem, codes, &failures);
    std::printf("per_min_parallel: %.2f candidates/min\n", parallel);
    std::printf("per_min_serial: %.2f candidates/min\n", serial);
    const QStringList few = codes.mid(0, 4);
    const double localMs = msPerCandidate(local, *target, *problem, few, &failures);
    std::printf("ms_per_candidate_local: %.0f ms\n", localMs);

    const int slots = QThread::idealThreadCount();
    const QString cli = qEnvironmentVariable("AUTOCOMP_CLI");
    test::SshDaemon ssh;
    QTemporaryDir remoteWork;
    if (QString why; ssh.start(&why)) {
        EvaluationConfig c;
        c.executor = QStringLiteral("ssh");
        c.hosts = {RemoteHost{QStringLiteral("127.0.0.1"), {}, ssh.port(), slots}};
        c.sshKnownHosts = ssh.knownHosts();
        c.sshIdentity = ssh.identity();
        c.remoteCommand = cli;
        c.remoteWorkdir = remoteWork.path();
        perMinute(c, 0, *target, *problem, codes.mid(0, 1), &failures); // the far side's setup
        std::printf("per_min_ssh: %.2f candidates/min\n", perMinute(c, 0, *target, *problem, codes, &failures));
        std::printf("overhead_ssh_ms: %.0f ms/candidate\n",
                    msPerCandidate(c, *target, *problem, few, &failures) - localMs);
    } else {
        std::fprintf(stderr, "eval_throughput: no ssh figures: %s\n", qPrintable(why));
    }
    test::SlurmCluster slurm;
    if (QString why; slurm.start(&why)) {
        EvaluationConfig c;
        c.executor = QStringLiteral("slurm");
        c.slurmSharedDir = slurm.dir() + QStringLiteral("/shared");
        c.slurmSlots = slots;
        c.slurmPollMs = 200;
        c.remoteCommand = cli;
        perMinute(c, 0, *target, *problem, codes.mid(0, 1), &failures);
        std::printf("per_min_slurm: %.2f candidates/min\n", perMinute(c, 0, *target, *problem, codes, &failures));
        std::printf("overhead_slurm_ms: %.0f ms/candidate\n",
                    msPerCandidate(c, *target, *problem, few, &failures) - localMs);
        c.slurmBatch = 8;
        c.slurmCpus = 1;
        std::printf("per_min_slurm_batched: %.2f candidates/min\n",
                    perMinute(c, 0, *target, *problem, codes, &failures));
        c.slurmSlots = 1;
        const double batchedMs = 60000.0 / perMinute(c, 1, *target, *problem, few, &failures);
        std::printf("overhead_slurm_batched_ms: %.0f ms/candidate\n", batchedMs - localMs);
    } else {
        std::fprintf(stderr, "eval_throughput: no slurm figures: %s\n", qPrintable(why));
    }
    std::printf("failed_evaluations: %d count\n", failures);
    return failures == 0 ? 0 : 1;
}
