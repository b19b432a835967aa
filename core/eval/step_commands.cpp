// The Evaluator's static side (evaluator.h): how a target's steps become commands: placeholders and their
// expansion, the environment and the sandbox's read-only paths of a step, the cache and machine identity that
// setup steps key their measurements by, the sources hash, and the evaluation options applied to a target.
#include "eval/evaluator.h"
#include "platform/data_paths.h"

#include <QCryptographicHash>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QMutex>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QSysInfo>

namespace autocomp {

namespace {

QString toleranceArgument(const Problem &p)
{
    // A KernelBench problem without its own tolerance: the judge picks KernelBench's by the output dtype.
    if (!p.toleranceSet && p.format == QLatin1String("kernelbench"))
        return QStringLiteral("auto");
    return QStringLiteral("rtol=%1,atol=%2").arg(p.rtol, 0, 'g', 6).arg(p.atol, 0, 'g', 6);
}

} // namespace

QString Evaluator::cacheDir()
{
    static const QString s_dir = [] {
        QString dir = QStandardPaths::writableLocation(QStandardPaths::GenericCacheLocation)
            + QStringLiteral("/autocomp-workbench");
        QDir().mkpath(dir);
        return dir;
    }();
    return s_dir;
}

QString Evaluator::machineId()
{
    static const QString s_id = [] {
        QString model;
        QFile cpuinfo(QStringLiteral("/proc/cpuinfo"));
        if (cpuinfo.open(QIODevice::ReadOnly)) {
            for (const QByteArray &line : cpuinfo.readAll().split('\n')) {
                if (line.startsWith("model name")) {
                    model = QString::fromUtf8(line.mid(line.indexOf(':') + 1)).trimmed();
                    break;
                }
            }
        }
        if (model.isEmpty())
            model = QSysInfo::currentCpuArchitecture();
        QString id = QSysInfo::machineHostName() + QLatin1Char('-') + model;
        id.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9._-]+")), QStringLiteral("_"));
        return id;
    }();
    return s_id;
}

QStringList Evaluator::placeholderNames()
{
    // Per evaluation (EvalJob::placeholders), per judged step (ProcessRunner::startJudged), then expand().
    return {QStringLiteral("candidate"),       QStringLiteral("workdir"),       QStringLiteral("judgedir"),
            QStringLiteral("baseline"),        QStringLiteral("seed"),          QStringLiteral("channels"),
            QStringLiteral("worker_pids"),     QStringLiteral("backend_dir"),   QStringLiteral("problem_dir"),
            QStringLiteral("problem"),         QStringLiteral("entry"),         QStringLiteral("reference"),
            QStringLiteral("shapes"),          QStringLiteral("bench_shape"),   QStringLiteral("tolerance"),
            QStringLiteral("allow_libraries"), QStringLiteral("allow_threads"), QStringLiteral("libraries"),
            QStringLiteral("libraries_csv"),   QStringLiteral("shape_ranges"),  QStringLiteral("random_shapes"),
            QStringLiteral("cache_dir"),       QStringLiteral("machine"),       QStringLiteral("target"),
            QStringLiteral("sources_hash"),    QStringLiteral("backend_hash"),  QStringLiteral("env:NAME"),
            QStringLiteral("candidate_hash"),  QStringLiteral("scale"),         QStringLiteral("level"),
            QStringLiteral("problem_slug"),    QStringLiteral("kit_dir")};
}

QString Evaluator::expand(QString out, const Target &target, const Problem &problem,
                          const QHash<QString, QString> &extra)
{
    const QString benchShape = problem.shapeArgument(problem.benchShape);
    for (auto it = extra.cbegin(); it != extra.cend(); ++it)
        out.replace(QLatin1Char('{') + it.key() + QLatin1Char('}'), it.value());
    out.replace(QLatin1String("{backend_dir}"), target.dir);
    if (out.contains(QLatin1String("{kit_dir}")))
        out.replace(QLatin1String("{kit_dir}"), DataPaths::kitDir());
    out.replace(QLatin1String("{problem_dir}"), problem.dir);
    out.replace(QLatin1String("{problem}"), problem.name);
    out.replace(QLatin1String("{problem_slug}"), QString(problem.name).replace(QLatin1Char('/'), QLatin1Char('-')));
    out.replace(QLatin1String("{scale}"), QString::number(problem.scale, 'g', 10));
    out.replace(QLatin1String("{level}"), QString::number(problem.level));
    out.replace(QLatin1String("{entry}"), problem.entry.isEmpty() ? problem.name : problem.entry);
    out.replace(QLatin1String("{reference}"), problem.referenceFile);
    out.replace(QLatin1String("{shapes}"), problem.shapesArgument());
    out.replace(QLatin1String("{bench_shape}"), benchShape);
    out.replace(QLatin1String("{tolerance}"), toleranceArgument(problem));
    out.replace(QLatin1String("{allow_libraries}"), problem.allowLibraries ? QStringLiteral("1") : QStringLiteral("0"));
    out.replace(QLatin1String("{allow_threads}"), problem.allowThreads ? QStringLiteral("1") : QStringLiteral("0"));
    out.replace(QLatin1String("{libraries_csv}"),
                problem.allowLibraries ? problem.libraries.join(QLatin1Char(',')) : QString());
    out.replace(QLatin1String("{shape_ranges}"), problem.shapeRangesArgument());
    out.replace(QLatin1String("{random_shapes}"),
                QString::number(problem.shapeRanges.isEmpty() ? 0 : problem.randomShapes));
    out.replace(QLatin1String("{cache_dir}"), cacheDir());
    out.replace(QLatin1String("{machine}"), machineId());
    out.replace(QLatin1String("{target}"), target.name);
    if (out.contains(QLatin1String("{sources_hash}")))
        out.replace(QLatin1String("{sources_hash}"), sourcesHash(target, problem));
    if (out.contains(QLatin1String("{backend_hash}")))
        out.replace(QLatin1String("{backend_hash}"), sourcesHash(target, Problem{}));
    // Target settings (backend.yaml `settings:`), e.g. {vlen}.
    for (const auto &setting : target.settings)
        out.replace(QLatin1Char('{') + setting.first + QLatin1Char('}'), setting.second);
    // {env:NAME}: a tool location given by the environment (e.g. a compiler or a test double).
    static const QRegularExpression s_env(QStringLiteral("\\{env:([A-Za-z_][A-Za-z0-9_]*)\\}"));
    // A name that looks like a secret expands to nothing: no step ever gets one.
    static const QRegularExpression s_secret(QStringLiteral("KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL"),
                                             QRegularExpression::CaseInsensitiveOption);
    for (auto m = s_env.match(out); m.hasMatch(); m = s_env.match(out))
        out.replace(m.capturedStart(), m.capturedLength(),
                    s_secret.match(m.captured(1)).hasMatch()
                        ? QString()
                        : qEnvironmentVariable(m.captured(1).toLatin1().constData()));
    return out;
}

namespace {
// A target's tools, looked up once per process and target (PATH does not change under a running program).
Target::ToolView toolsOf(const Target &target)
{
    static QMutex s_mutex;
    static QHash<QString, Target::ToolView> s_views;
    const QString key = target.dir + QLatin1Char('|') + target.name;
    {
        const QMutexLocker lock(&s_mutex);
        if (const auto it = s_views.constFind(key); it != s_views.cend())
            return *it;
    }
    Target::ToolView view = target.toolView();
    const QMutexLocker lock(&s_mutex);
    s_views.insert(key, view);
    return view;
}
} // namespace

QMap<QString, QString> Evaluator::stepEnvironment(const Target &target, const Problem &problem)
{
    QMap<QString, QString> env;
    // The target's tools where the user has them (Chipyard's $RISCV/bin, a venv, /opt/...), before the system's.
    if (const QStringList dirs = toolsOf(target).pathDirs; !dirs.isEmpty())
        env.insert(
            QStringLiteral("PATH"),
            (dirs + QStringList{QStringLiteral("/usr/local/bin"), QStringLiteral("/usr/bin"), QStringLiteral("/bin")})
                .join(QLatin1Char(':')));
    for (auto it = target.environment.cbegin(); it != target.environment.cend(); ++it)
        env.insert(it.key(), expand(it.value(), target, problem, {}));
    return env;
}

QStringList Evaluator::sandboxReadOnly(const Target &target, const Problem &problem, bool trusted)
{
    QStringList dirs{cacheDir()};
    auto add = [&dirs](const QString &path) {
        const QString clean = QDir::cleanPath(path);
        if (path.isEmpty() || !QFileInfo::exists(clean))
            return;
        for (const QString &p : {clean, QFileInfo(clean).canonicalFilePath()})
            if (!p.isEmpty() && !dirs.contains(p))
                dirs << p;
    };
    add(target.dir);
    for (const QString &path : target.sandboxReadOnly)
        if (const QString expanded = expand(path, target, problem, {});
            QDir::cleanPath(expanded).startsWith(QLatin1Char('/')))
            add(expanded);
    for (const QString &path : toolsOf(target).readOnly)
        add(path);
    if (trusted)
        add(problem.dir);
    return dirs;
}

QStringList Evaluator::expandArgs(const QStringList &run, const Target &target, const Problem &problem,
                                  const QHash<QString, QString> &extra)
{
    QStringList command;
    for (const QString &arg : run) {
        if (arg == QLatin1String("{libraries}")) {
            if (problem.allowLibraries)
                for (const QString &library : problem.libraries)
                    command << QStringLiteral("-l") + library;
            continue;
        }
        // "{backend_dir}/../cpu/include" becomes a plain path: the sandbox binds directories, and
        // a path through one it does not show would not resolve.
        QString expanded = expand(arg, target, problem, extra);
        static const QRegularExpression s_dotted(QStringLiteral("^(-[A-Za-z]|--?[A-Za-z-]+=)?(/.*/\\.\\./.*)$"));
        if (const auto m = s_dotted.match(expanded); m.hasMatch())
            expanded = m.captured(1) + QDir::cleanPath(m.captured(2));
        command << expanded;
    }
    return command;
}

QString Evaluator::sourcesHash(const Target &target, const Problem &problem)
{
    // The target's and the problem's files and every -I directory of the steps: a cached build
    // product named with this hash is rebuilt whenever any of them changes. Computed once per
    // process, so setup and steps agree even when a file is edited while the program runs.
    // No lock is held while expanding: an -I argument may itself name a hash
    // ("-I{cache_dir}/x-{backend_hash}/include"), and expanding it comes back here (a re-entrant call on a held lock
    // hung every evaluation of such a target).
    static QMutex s_mutex;
    static QHash<QString, QString> s_hashes;
    const QString key = target.dir + QLatin1Char('|') + problem.dir;
    {
        const QMutexLocker lock(&s_mutex);
        if (const auto it = s_hashes.constFind(key); it != s_hashes.cend())
            return *it;
    }
    // Without a problem (its dir empty): the backend's files alone, {backend_hash}. Folders that a hash
    // names are build products in the cache, not sources: left out.
    QStringList dirs{target.dir};
    if (!problem.dir.isEmpty())
        dirs << problem.dir;
    for (const QList<TargetStep> *steps : {&target.steps, &target.setupSteps})
        for (const TargetStep &step : *steps)
            for (const QString &arg : step.run)
                if (arg.startsWith(QLatin1String("-I"))
                    && (!problem.dir.isEmpty() || !arg.contains(QLatin1String("{problem_dir}")))
                    && !arg.contains(QLatin1String("_hash}")) && !arg.contains(QLatin1String("{cache_dir}")))
                    dirs << QDir::cleanPath(expand(arg.mid(2), target, problem, {}));
    // Read-only paths inside the folder of the backends or the judge kit (sandbox_read_only: a kit shared by
    // several targets, backends/common or {kit_dir}) are sources too: a change there rebuilds what was
    // built from them. Paths elsewhere (a Python environment) are tools, not sources.
    const QString backendsRoot = QFileInfo(QDir::cleanPath(target.dir)).path() + QLatin1Char('/');
    const QString kitRoot = DataPaths::kitDir() + QLatin1Char('/');
    for (const QString &path : target.sandboxReadOnly)
        if (!path.contains(QLatin1String("_hash}"))
            && (!problem.dir.isEmpty() || !path.contains(QLatin1String("{problem_dir}"))))
            if (const QString dir = QDir::cleanPath(expand(path, target, problem, {}));
                dir.startsWith(backendsRoot) || QString(dir + QLatin1Char('/')).startsWith(kitRoot))
                dirs << dir;
    QStringList files;
    for (const QString &dir : std::as_const(dirs)) {
        QDirIterator it(dir, QDir::Files, QDirIterator::Subdirectories);
        while (it.hasNext()) {
            const QString path = it.next();
            // Python's bytecode caches are written by the tools as they run: not part of what is hashed.
            if (path.contains(QLatin1String("/__pycache__/")) || path.endsWith(QLatin1String(".pyc")))
                continue;
            files << QFileInfo(path).canonicalFilePath();
        }
    }
    files.removeDuplicates();
    files.sort();
    QCryptographicHash hash(QCryptographicHash::Sha1);
    for (const QString &path : std::as_const(files)) {
        QFile file(path);
        if (file.open(QIODevice::ReadOnly)) {
            hash.addData(path.toUtf8());
            hash.addData(file.readAll());
        }
    }
    const QString result = QString::fromLatin1(hash.result().toHex().left(16));
    const QMutexLocker lock(&s_mutex);
    // Another thread may have computed it meanwhile (the same files, the same hash): the first one stays.
    return *s_hashes.insert(key, s_hashes.value(key, result));
}

Target Evaluator::withOptions(Target target, const EvaluationConfig &config)
{
    const auto off = [&config](const TargetStep &step) {
        return step.option == QLatin1String("profile") && !config.profile;
    };
    target.steps.removeIf(off);
    target.setupSteps.removeIf(off);
    return target;
}

} // namespace autocomp
