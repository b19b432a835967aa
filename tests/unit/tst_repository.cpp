// Repository: loading the shipped targets, problems and agents, and the errors a user gets when one is broken.
#include "eval/evaluator.h"
#include "catalog/repository.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QRegularExpression>
#include <QTest>

using namespace Qt::StringLiterals;
using autocomp::Repository;

namespace {

QString dataDir() { return qEnvironmentVariable("AUTOCOMP_DATA_DIR"); }

bool writeFile(const QString &path, const QByteArray &content)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile file(path);
    return file.open(QIODevice::WriteOnly) && file.write(content) == content.size();
}

} // namespace

class TestRepository : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void listsShippedData();
    void loadsCpuTarget();
    // The trust map of every shipped target (DESIGN.md §5): judging steps run programs from the
    // per-machine cache and write only {judgedir}; candidate steps never name {judgedir}; no worker
    // or candidate step sees the seed; setup steps write only the cache.
    void trustBoundaryOfShippedTargets()
    {
        Repository repo({dataDir()});
        for (const QString &name : repo.targetNames()) {
            QString error;
            const auto target = repo.target(name, &error);
            QVERIFY2(target, qPrintable(error));
            const QStringList outputs{u"--result"_s, u"--out"_s, u"--report"_s};
            for (const autocomp::TargetStep &step : target->steps) {
                const QString where = name + u"/"_s + step.name;
                const QString all = step.run.join(u' ') + step.worker.join(u' ') + step.baselineWorker.join(u' ');
                if (step.judge()) {
                    // A program built into the cache, or an interpreter (a target setting such as {python}) running
                    // a script copied into the cache.
                    const bool interpreted =
                        QRegularExpression(u"^(\\{[a-z_]+\\}|python3|sh)$"_s).match(step.run.first()).hasMatch()
                        && !step.run.first().startsWith(u"{cache_dir"_s) && step.run.size() > 1;
                    // The interpreter's own flags (-I: isolated, -S: no site) come before the script.
                    qsizetype script = 1;
                    while (interpreted && script + 1 < step.run.size()
                           && QRegularExpression(u"^-[A-Za-z]+$"_s).match(step.run.at(script)).hasMatch())
                        ++script;
                    const QString program = interpreted ? step.run.at(script) : step.run.first();
                    QVERIFY2(program.startsWith(u"{cache_dir}/"_s),
                             qPrintable(where + u": a judge runs from the cache"_s));
                    for (qsizetype i = 0; i + 1 < step.run.size(); ++i)
                        if (outputs.contains(step.run.at(i)))
                            QVERIFY2(step.run.at(i + 1).startsWith(u"{judgedir}/"_s),
                                     qPrintable(where + u" writes " + step.run.at(i + 1)));
                    for (const QStringList *worker : {&step.worker, &step.baselineWorker})
                        QVERIFY2(!worker->join(u' ').contains(u"{seed}"_s)
                                     && !worker->join(u' ').contains(u"{judgedir}"_s),
                                 qPrintable(where + u": a worker sees the seed or the judge's directory"_s));
                } else {
                    QVERIFY2(!all.contains(u"{judgedir}"_s) && !all.contains(u"{seed}"_s),
                             qPrintable(where + u": a candidate step names the judge's directory or the seed"_s));
                    QVERIFY2(step.worker.isEmpty(), qPrintable(where));
                }
            }
            for (const autocomp::TargetStep &step : target->setupSteps)
                QVERIFY2(!step.run.join(u' ').contains(u"{workdir}"_s), qPrintable(name + u"/"_s + step.name));
        }
    }

    void loadsGemmProblem();
    void loadsCpuAgent();
    void unknownNamesListTheKnownOnes();
    void brokenBackendNamesFileAndLine_data();
    void brokenBackendNamesFileAndLine();
    void problemWithMissingStartFile();
    void problemErrors_data();
    void problemErrors();
    void librariesBecomeLinkArguments();
    void agentWithoutMenuIsRefused();
    void firstDataDirShadowsLater();
};

void TestRepository::initTestCase()
{
    QVERIFY2(!dataDir().isEmpty(), "AUTOCOMP_DATA_DIR must point at the repository root");
    QVERIFY(QFileInfo::exists(dataDir() + u"/backends/cpu/backend.yaml"_s));
}

void TestRepository::listsShippedData()
{
    const Repository repo({dataDir()});
    QVERIFY(repo.targetNames().contains(u"cpu"_s));
    QVERIFY(repo.problemNames(u"cpu"_s).contains(u"gemm"_s));
    QVERIFY(repo.agentNames().contains(u"cpu"_s));
    QVERIFY(repo.problemNames(u"no-such-target"_s).isEmpty());
}

void TestRepository::loadsCpuTarget()
{
    const Repository repo({dataDir()});
    QString error;
    const auto target = repo.target(u"cpu"_s, &error);
    QVERIFY2(target, qPrintable(error));
    QCOMPARE(target->name, u"cpu"_s);
    QCOMPARE(target->language, u"cpp"_s);
    QCOMPARE(target->fileExtension, u"cpp"_s);
    QCOMPARE(target->metric, u"latency_ms"_s);
    QCOMPARE(target->metricUnit, u"ms"_s);
    QVERIFY(QFileInfo(target->dir).isAbsolute());
    QVERIFY(QFileInfo::exists(target->dir + u"/backend.yaml"_s));

    QStringList names;
    for (const auto &step : target->steps)
        names << step.name;
    // The candidate is compiled, gated, linked, checked by the judge, timed, and the last step reports.
    const qsizetype compile = names.indexOf(u"compile"_s);
    const qsizetype gate = names.indexOf(u"gate"_s);
    const qsizetype link = names.indexOf(u"link"_s);
    const qsizetype check = names.indexOf(u"check"_s);
    const qsizetype bench = names.indexOf(u"bench"_s);
    QVERIFY2(compile >= 0 && gate > compile && link > gate && check > link && bench > check,
             qPrintable(names.join(u", "_s)));
    QCOMPARE(names.last(), u"report"_s);
    const auto &compileStep = target->steps.at(compile);
    QCOMPARE(compileStep.failStatus, u"compile_error"_s);
    QCOMPARE(compileStep.timeoutS, 120);
    QVERIFY(compileStep.parallel);
    QVERIFY(compileStep.run.contains(u"{candidate}"_s));
    QVERIFY(!compileStep.exclusive);
    const auto &benchStep = target->steps.at(bench);
    QVERIFY(benchStep.exclusive);
    QCOMPARE(benchStep.timeoutS, 300);
    QCOMPARE(target->steps.at(check).failStatus, u"incorrect"_s);
    QCOMPARE(target->steps.at(gate).failStatus, u"rejected"_s);
}

void TestRepository::loadsGemmProblem()
{
    const Repository repo({dataDir()});
    QString error;
    const auto problem = repo.problem(u"cpu"_s, u"gemm"_s, &error);
    QVERIFY2(problem, qPrintable(error));
    QCOMPARE(problem->name, u"gemm"_s);
    QCOMPARE(problem->target, u"cpu"_s);
    QCOMPARE(problem->dtype, u"fp32"_s);
    // Every shape names M, N and K; the timed shape is one of them.
    QVERIFY(problem->shapes.size() >= 2);
    for (const QVariantMap &shape : std::as_const(problem->shapes))
        for (const QString &dim : {u"M"_s, u"N"_s, u"K"_s})
            QVERIFY2(shape.value(dim).toInt() > 0, qPrintable(dim));
    QVERIFY(problem->benchShape >= 0 && problem->benchShape < problem->shapes.size());
    QVERIFY(problem->rtol > 0 && problem->rtol < 0.1);
    QVERIFY(problem->atol > 0 && problem->atol < 0.1);
    QCOMPARE(problem->flops, u"2*M*N*K"_s);
    QVERIFY(!problem->allowLibraries);
    QVERIFY(QFileInfo(problem->startFile).isAbsolute());
    QVERIFY2(QFileInfo::exists(problem->startFile), qPrintable(problem->startFile));
    QVERIFY2(QFileInfo::exists(problem->referenceFile), qPrintable(problem->referenceFile));
    QVERIFY(problem->startFile.endsWith(u"gemm_start.cpp"_s));
    QVERIFY(problem->referenceFile.endsWith(u"gemm_reference.cpp"_s));
    QVERIFY(!problem->context.isEmpty());
    QVERIFY(problem->startCode().contains(u"gemm"_s));
    const QString shapes = problem->shapesArgument();
    QCOMPARE(shapes.count(u';'), problem->shapes.size() - 1);
    const QVariantMap &first = problem->shapes.first();
    const QStringList firstArgs = shapes.section(u';', 0, 0).split(u',');
    for (const QString &dim : {u"M"_s, u"N"_s, u"K"_s})
        QVERIFY2(firstArgs.contains(dim + u'=' + QString::number(first.value(dim).toInt())), qPrintable(shapes));
}

void TestRepository::loadsCpuAgent()
{
    const Repository repo({dataDir()});
    QString error;
    const auto agent = repo.agent(u"cpu"_s, &error);
    QVERIFY2(agent, qPrintable(error));
    QCOMPARE(agent->name, u"cpu"_s);
    QCOMPARE(agent->target, u"cpu"_s);
    QVERIFY(agent->menu.size() >= 5);
    for (const QString &item : agent->menu)
        QVERIFY2(!item.trimmed().isEmpty(), "a menu entry is empty");
    QVERIFY(agent->menu.first().startsWith(u"Tile the loops"_s));
    QVERIFY(!agent->rulesGeneral.isEmpty());
    QVERIFY(agent->rulesGeneral.first().contains(u"extern \"C\""_s));
    QVERIFY(!agent->architecture.isEmpty());
    QVERIFY(!agent->isaDocs.isEmpty());
    QVERIFY(!agent->codeExamples.isEmpty());
    for (const auto &example : agent->codeExamples) {
        QVERIFY(!example.name.isEmpty());
        QVERIFY2(!example.code.trimmed().isEmpty(), qPrintable(example.name));
    }
}

void TestRepository::unknownNamesListTheKnownOnes()
{
    const Repository repo({dataDir()});
    QString error;
    QVERIFY(!repo.target(u"tpu-v9"_s, &error));
    QVERIFY2(error.contains(u"tpu-v9"_s) && error.contains(u"cpu"_s), qPrintable(error));
    error.clear();
    QVERIFY(!repo.problem(u"cpu"_s, u"fft"_s, &error));
    QVERIFY2(error.contains(u"fft"_s) && error.contains(u"gemm"_s), qPrintable(error));
    error.clear();
    QVERIFY(!repo.agent(u"nobody"_s, &error));
    QVERIFY2(error.contains(u"nobody"_s) && error.contains(u"cpu"_s), qPrintable(error));
}

void TestRepository::brokenBackendNamesFileAndLine_data()
{
    QTest::addColumn<QByteArray>("yaml");
    QTest::addColumn<int>("line");
    QTest::addColumn<QString>("mentions");

    const QByteArray head = "name: broken\nlanguage: cpp\n";
    const QByteArray step = "steps:\n  - {name: compile, run: [c++, \"{candidate}\"]}\n";
    QTest::newRow("unknown key") << QByteArray(head + "metrik: latency_ms\n" + step) << 3 << u"metrik"_s;
    QTest::newRow("unknown step key") << QByteArray(head
                                                    + "steps:\n  - name: compile\n    run: [c++]\n    timeout: 5\n")
                                      << 6 << u"timeout"_s;
    QTest::newRow("timeout not a number")
        << QByteArray(head + "steps:\n  - name: compile\n    run: [c++]\n    timeout_s: soon\n") << 6 << u"soon"_s;
    QTest::newRow("step without run") << QByteArray(head + "steps:\n  - name: compile\n    timeout_s: 5\n") << 4
                                      << u"compile"_s;
    QTest::newRow("unknown step option") << QByteArray(
        head + "steps:\n  - name: compile\n    run: [c++]\n    option: turbo\n")
                                         << 6 << u"turbo"_s;
    QTest::newRow("YAML syntax error") << QByteArray(head + "steps: [\n  {name: compile, run: [c++]\n") << 5
                                       << u"syntax"_s;
}

void TestRepository::brokenBackendNamesFileAndLine()
{
    QFETCH(QByteArray, yaml);
    QFETCH(int, line);
    QFETCH(QString, mentions);

    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath(u"backends/broken/backend.yaml"_s);
    QVERIFY(writeFile(path, yaml));

    const Repository repo({dir.path()});
    QString error;
    QVERIFY(!repo.target(u"broken"_s, &error));
    const QString prefix = path + u':' + QString::number(line) + u':';
    QVERIFY2(error.contains(prefix) && error.contains(mentions),
             qPrintable(u"expected '%1' and '%2' in:\n"_s.arg(prefix, mentions) + error));
}

void TestRepository::problemWithMissingStartFile()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString problemDir = dir.filePath(u"sols/cpu/axpy"_s);
    QVERIFY(writeFile(problemDir + u"/axpy_reference.cpp"_s, "// reference\n"));
    QVERIFY(writeFile(problemDir + u"/problem.yaml"_s,
                      "name: axpy\nstart: axpy_start.cpp\nreference: axpy_reference.cpp\nshapes: [{N: 1024}]\n"));

    const Repository repo({dir.path()});
    QString error;
    QVERIFY(!repo.problem(u"cpu"_s, u"axpy"_s, &error));
    const QString prefix = problemDir + u"/problem.yaml:2:"_s;
    QVERIFY2(error.contains(prefix), qPrintable(error));
    QVERIFY2(error.contains(u"axpy_start.cpp"_s), qPrintable(error));
}

void TestRepository::problemErrors_data()
{
    QTest::addColumn<QByteArray>("yaml");
    QTest::addColumn<int>("line");
    QTest::addColumn<QString>("mentions");

    const QByteArray files = "start: s.cpp\nreference: r.cpp\n";
    QTest::newRow("no shapes") << QByteArray(files) << 1 << u"shapes"_s;
    QTest::newRow("shape not a number") << QByteArray(files + "shapes: [{N: big}]\n") << 3 << u"big"_s;
    QTest::newRow("bench_shape out of range")
        << QByteArray(files + "shapes: [{N: 8}]\nbench_shape: 3\n") << 4 << u"bench_shape"_s;
    QTest::newRow("unknown tolerance key")
        << QByteArray(files + "shapes: [{N: 8}]\ntolerance: {rtoll: 1}\n") << 4 << u"rtoll"_s;
    QTest::newRow("missing reference") << QByteArray("start: s.cpp\nshapes: [{N: 8}]\n") << 1 << u"reference"_s;
    QTest::newRow("libraries without allow_libraries")
        << QByteArray(files + "shapes: [{N: 8}]\nlibraries: [openblas]\n") << 4 << u"allow_libraries: true"_s;
    QTest::newRow("library name that is an option")
        << QByteArray(files + "shapes: [{N: 8}]\nallow_libraries: true\nlibraries: [openblas, -Wl]\n") << 5
        << u"'-Wl'"_s;
}

void TestRepository::problemErrors()
{
    QFETCH(QByteArray, yaml);
    QFETCH(int, line);
    QFETCH(QString, mentions);

    QTemporaryDir dir;
    const QString problemDir = dir.filePath(u"sols/cpu/p"_s);
    QVERIFY(writeFile(problemDir + u"/s.cpp"_s, "// start\n"));
    QVERIFY(writeFile(problemDir + u"/r.cpp"_s, "// reference\n"));
    QVERIFY(writeFile(problemDir + u"/problem.yaml"_s, yaml));

    QString error;
    QVERIFY(!Repository::loadProblem(problemDir, u"cpu"_s, &error));
    const QString prefix = problemDir + u"/problem.yaml:"_s + QString::number(line) + u':';
    QVERIFY2(error.contains(prefix) && error.contains(mentions),
             qPrintable(u"expected '%1' and '%2' in:\n"_s.arg(prefix, mentions) + error));
}

void TestRepository::librariesBecomeLinkArguments()
{
    QTemporaryDir dir;
    const QString problemDir = dir.filePath(u"sols/cpu/p"_s);
    QVERIFY(writeFile(problemDir + u"/s.cpp"_s, "// start\n"));
    QVERIFY(writeFile(problemDir + u"/r.cpp"_s, "// reference\n"));
    QVERIFY(writeFile(
        problemDir + u"/problem.yaml"_s,
        "start: s.cpp\nreference: r.cpp\nshapes: [{N: 8}]\nallow_libraries: true\nlibraries: [openblas, m]\n"));
    QString error;
    auto problem = Repository::loadProblem(problemDir, u"cpu"_s, &error);
    QVERIFY2(problem, qPrintable(error));
    QCOMPARE(problem->libraries, QStringList({u"openblas"_s, u"m"_s}));

    const QStringList link{u"c++"_s, u"-o"_s, u"{workdir}/candidate"_s, u"{libraries}"_s, u"x{libraries}"_s};
    const QHash<QString, QString> extra{{u"workdir"_s, u"/w"_s}};
    // Only an argument that is exactly {libraries} becomes the -l options; nothing else is split.
    QCOMPARE(autocomp::Evaluator::expandArgs(link, autocomp::Target{}, *problem, extra),
             QStringList({u"c++"_s, u"-o"_s, u"/w/candidate"_s, u"-lopenblas"_s, u"-lm"_s, u"x{libraries}"_s}));
    problem->allowLibraries = false;
    QCOMPARE(autocomp::Evaluator::expandArgs(link, autocomp::Target{}, *problem, extra),
             QStringList({u"c++"_s, u"-o"_s, u"/w/candidate"_s, u"x{libraries}"_s}));
}

void TestRepository::agentWithoutMenuIsRefused()
{
    QTemporaryDir dir;
    const QString agentDir = dir.filePath(u"agents/empty"_s);
    QVERIFY(writeFile(agentDir + u"/agent_config.yaml"_s, "name: empty\ntarget: cpu\n"));
    QString error;
    QVERIFY(!Repository::loadAgent(agentDir, &error));
    QVERIFY2(error.contains(u"optimization_menu.yaml"_s), qPrintable(error));
}

void TestRepository::firstDataDirShadowsLater()
{
    // A user's copy of an agent (earlier in the search order) wins over the shipped one.
    QTemporaryDir dir;
    const QString agentDir = dir.filePath(u"agents/cpu"_s);
    QVERIFY(writeFile(agentDir + u"/agent_config.yaml"_s, "name: cpu\ntarget: cpu\ndescription: my edited copy\n"));
    QVERIFY(writeFile(agentDir + u"/optimization_menu.yaml"_s, "optimizations:\n  - strategy: \"only this\"\n"));

    const Repository repo({dir.path(), dataDir()});
    QString error;
    const auto agent = repo.agent(u"cpu"_s, &error);
    QVERIFY2(agent, qPrintable(error));
    QCOMPARE(agent->description, u"my edited copy"_s);
    QCOMPARE(agent->menu, QStringList{u"only this"_s});
    QCOMPARE(repo.agentNames().count(u"cpu"_s), 1);
}

QTEST_GUILESS_MAIN(TestRepository)
#include "tst_repository.moc"
