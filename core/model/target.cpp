#include "model/target.h"

#include "platform/data_paths.h"
#include "platform/sandbox.h"

#include <algorithm>

#include <QDir>
#include <QFileInfo>
#include <QHash>
#include <QMutex>
#include <QProcess>
#include <QProcessEnvironment>
#include <QStandardPaths>
#include <QTemporaryDir>

namespace autocomp {

QStringList Target::missingPrograms() const
{
    QStringList missing;
    for (const QString &program : availableIf)
        if (QStandardPaths::findExecutable(program).isEmpty())
            missing << program;
    return missing;
}

QString Target::absenceReason() const
{
    const QStringList missing = missingPrograms();
    QString why;
    if (!missing.isEmpty())
        why = QStringLiteral("%1 not found on PATH").arg(missing.join(QLatin1String(", ")));
    else if (!availableCheck.isEmpty())
        why = runCheck(expandCheck(availableCheck), checkEnvironment(), sandboxReadOnlyDirs());
    if (why.isEmpty())
        return {};
    QString reason = QStringLiteral("target '%1' is absent on this machine: %2").arg(name, why);
    if (!requires_.isEmpty())
        reason += QStringLiteral(" (it needs: %1)").arg(requires_);
    return reason;
}

QString Target::hardwareAbsence() const
{
    if (hardwareCheck.isEmpty() || !missingPrograms().isEmpty())
        return {};
    return runCheck(expandCheck(hardwareCheck), checkEnvironment(), sandboxReadOnlyDirs(), true);
}

QMap<QString, QString> Target::checkEnvironment() const
{
    // The steps' PATH (their tools first, then the system's), so the check finds what the steps will.
    QMap<QString, QString> env = environment;
    if (!env.contains(QStringLiteral("PATH")))
        env.insert(QStringLiteral("PATH"),
                   (toolView().pathDirs
                    + QStringList{QStringLiteral("/usr/local/bin"), QStringLiteral("/usr/bin"), QStringLiteral("/bin")})
                       .join(QLatin1Char(':')));
    return env;
}

QStringList Target::toolNotes() const
{
    QStringList notes;
    for (const Tool &tool : toolView().tools)
        if (tool.path.isEmpty())
            notes << QStringLiteral("%1 not found").arg(tool.name);
        else if (!tool.path.startsWith(QLatin1String("/usr/")) && !tool.path.startsWith(QLatin1String("/bin/")))
            notes << QStringLiteral("%1 at %2").arg(tool.name, tool.path);
    return notes;
}

Target::ToolView Target::toolView() const
{
    ToolView view;
    const QStringList system = Sandbox::systemPaths();
    auto isSystem = [&system](const QString &path) {
        for (const QString &base : system)
            if (path == base || path.startsWith(base + QLatin1Char('/')))
                return true;
        return false;
    };
    // Folders that hold the user's or this program's own files are never shown whole.
    const QString home = QDir::homePath();
    QStringList guarded{home};
    for (const auto location : {QStandardPaths::GenericDataLocation, QStandardPaths::GenericConfigLocation,
                                QStandardPaths::GenericCacheLocation})
        guarded << QStandardPaths::writableLocation(location);
    auto holdsGuarded = [&guarded](const QString &dir) {
        for (const QString &g : std::as_const(guarded))
            if (!g.isEmpty() && (g == dir || g.startsWith(dir + QLatin1Char('/'))))
                return true;
        return false;
    };
    auto show = [&](const QString &dir) {
        if (!dir.isEmpty() && dir != QLatin1String("/") && !isSystem(dir) && !view.readOnly.contains(dir)
            && !holdsGuarded(dir))
            view.readOnly << dir;
    };
    auto addBinDir = [&](const QString &binDir) {
        if (binDir.isEmpty() || isSystem(binDir))
            return;
        if (!view.pathDirs.contains(binDir))
            view.pathDirs << binDir;
        const QString prefix = QDir::cleanPath(binDir + QStringLiteral("/.."));
        if (QFileInfo(binDir).fileName() == QLatin1String("bin") && !isSystem(prefix) && !holdsGuarded(prefix))
            show(prefix); // the installation: lib/, libexec/, share/ beside bin/
        else {
            show(binDir);
            for (const char *lib : {"lib", "lib64"})
                if (QFileInfo(prefix + QLatin1Char('/') + QLatin1String(lib)).isDir())
                    show(prefix + QLatin1Char('/') + QLatin1String(lib));
        }
    };
    // A name the system's own folders provide stays the system's, as the steps' PATH has always found it
    // (a pyenv or conda shim first on the caller's PATH would not run in the sandbox); only a tool they lack
    // is looked up on the caller's PATH.
    static const QStringList s_systemPath{QStringLiteral("/usr/local/bin"), QStringLiteral("/usr/bin"),
                                          QStringLiteral("/bin")};
    auto addProgram = [&](const QString &name, const QString &program) {
        if (std::any_of(view.tools.cbegin(), view.tools.cend(), [&](const Tool &t) { return t.name == name; }))
            return;
        if (!program.startsWith(QLatin1Char('/'))) {
            if (const QString system = QStandardPaths::findExecutable(program, s_systemPath); !system.isEmpty()) {
                view.tools << Tool{name, system};
                return;
            }
        }
        const QString found = program.startsWith(QLatin1Char('/'))
            ? (QFileInfo(program).isExecutable() ? program : QString())
            : QStandardPaths::findExecutable(program);
        view.tools << Tool{name, found};
        if (found.isEmpty())
            return;
        addBinDir(QFileInfo(found).absolutePath());
        // A link into an installation elsewhere (/usr/local/bin/spike -> /opt/chipyard/bin/spike).
        const QString real = QFileInfo(found).canonicalFilePath();
        if (!real.isEmpty() && real != found)
            addBinDir(QFileInfo(real).absolutePath());
    };
    for (const QString &program : availableIf)
        addProgram(program, program);
    for (const QList<TargetStep> *list : {&steps, &setupSteps})
        for (const TargetStep &step : *list)
            for (const QStringList *command : {&step.run, &step.worker, &step.baselineWorker}) {
                const QString first = expandCheck(command->mid(0, 1)).value(0);
                // A bare program name; paths and the cache's own programs are the steps' business.
                if (!first.isEmpty() && !first.contains(QLatin1Char('/')) && !first.contains(QLatin1Char('{')))
                    addProgram(first, first);
            }
    for (const auto &[name, value] : settings) {
        // A plain word that names a program on the caller's PATH (spike: spike) is a tool like the others.
        if (!value.isEmpty() && !value.contains(QLatin1Char('/')) && !QStandardPaths::findExecutable(value).isEmpty()) {
            addProgram(name, value);
            continue;
        }
        if (!value.startsWith(QLatin1Char('/')))
            continue;
        const QFileInfo info(value);
        if (info.isDir()) {
            view.tools << Tool{name, value};
            if (QFileInfo(value + QStringLiteral("/bin")).isDir())
                addBinDir(value + QStringLiteral("/bin"));
            show(value);
        } else if (info.isFile()) {
            addProgram(name, value);
        }
    }
    return view;
}

QStringList Target::sandboxReadOnlyDirs() const
{
    QStringList dirs;
    auto add = [&dirs](const QString &path) {
        // Cleaned first: "{python}/../.." goes through a file, which the file system would refuse.
        const QString clean = QDir::cleanPath(path);
        if (path.isEmpty() || !QFileInfo::exists(clean))
            return;
        const QString real = QFileInfo(clean).canonicalFilePath();
        for (const QString &p : {clean, real})
            if (!p.isEmpty() && !dirs.contains(p))
                dirs << p;
    };
    add(dir);
    for (const QString &path : expandCheck(sandboxReadOnly))
        if (QDir::cleanPath(path).startsWith(QLatin1Char('/')))
            add(path);
    for (const QString &path : toolView().readOnly)
        add(path);
    return dirs;
}

QStringList Target::expandCheck(const QStringList &command) const
{
    QStringList out;
    const QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (QString arg : command) {
        arg.replace(QStringLiteral("{backend_dir}"), dir);
        if (arg.contains(QLatin1String("{kit_dir}")))
            arg.replace(QStringLiteral("{kit_dir}"), DataPaths::kitDir());
        arg.replace(QStringLiteral("{target}"), name);
        for (const auto &setting : settings)
            arg.replace(QLatin1Char('{') + setting.first + QLatin1Char('}'), setting.second);
        // {env:NAME}: a tool's location from the caller (never a secret: those names expand to nothing).
        qsizetype at = 0;
        while ((at = arg.indexOf(QStringLiteral("{env:"), at)) >= 0) {
            const qsizetype end = arg.indexOf(QLatin1Char('}'), at);
            if (end < 0)
                break;
            const QString var = arg.mid(at + 5, end - at - 5);
            static const QStringList secretish{QStringLiteral("KEY"), QStringLiteral("TOKEN"), QStringLiteral("SECRET"),
                                               QStringLiteral("PASSWORD"), QStringLiteral("CREDENTIAL")};
            const bool secret = std::any_of(secretish.begin(), secretish.end(),
                                            [&](const QString &s) { return var.toUpper().contains(s); });
            const QString value = secret ? QString() : env.value(var);
            arg.replace(at, end - at + 1, value);
            at += value.size();
        }
        out << arg;
    }
    return out;
}

QString Target::runCheck(const QStringList &command, const QMap<QString, QString> &environment,
                         const QStringList &readOnly, bool gpu)
{
    if (command.isEmpty())
        return {};
    static QMutex s_mutex;
    static QHash<QString, QString> s_results;
    const QString key = command.join(QChar(0)) + QChar(1) + readOnly.join(QChar(0))
        + (gpu ? QStringLiteral("gpu") : QString());
    {
        const QMutexLocker lock(&s_mutex);
        if (auto it = s_results.constFind(key); it != s_results.cend())
            return *it;
    }
    // Like a step: in the sandbox where there is one (so "available" means that the steps can run:
    // the same files hidden, the same paths shown), PATH and LANG of the caller, the target's env, and a
    // HOME and TMPDIR of its own, the only place it can write.
    QTemporaryDir home(QDir::tempPath() + QStringLiteral("/autocomp-check-XXXXXX"));
    const QProcessEnvironment system = QProcessEnvironment::systemEnvironment();
    QProcessEnvironment env;
    for (const char *var : {"PATH", "LANG"})
        if (system.contains(QLatin1String(var)))
            env.insert(QLatin1String(var), system.value(QLatin1String(var)));
    const bool sandboxed = Sandbox::available() && home.isValid();
    if (sandboxed) {
        env.insert(QStringLiteral("HOME"), home.path());
        env.insert(QStringLiteral("TMPDIR"), QStringLiteral("/tmp"));
    } else {
        for (const char *var : {"TMPDIR", "HOME"})
            if (system.contains(QLatin1String(var)))
                env.insert(QLatin1String(var), system.value(QLatin1String(var)));
    }
    for (auto it = environment.cbegin(); it != environment.cend(); ++it)
        if (!it.value().contains(QLatin1Char('{')))
            env.insert(it.key(), it.value());
    QProcess process;
    process.setProcessEnvironment(env);
    process.setProcessChannelMode(QProcess::MergedChannels);
    const QStringList full = sandboxed ? Sandbox::wrap(command, home.path(), readOnly, false, gpu) : command;
    process.start(full.first(), full.mid(1));
    QString reason;
    if (!process.waitForStarted(10000)) {
        reason = QStringLiteral("cannot run %1: %2").arg(command.first(), process.errorString());
    } else if (!process.waitForFinished(120000)) {
        process.kill();
        process.waitForFinished(2000);
        reason = QStringLiteral("the check '%1' did not finish in 120 s").arg(command.join(QLatin1Char(' ')));
    } else if (process.exitStatus() != QProcess::NormalExit || process.exitCode() != 0) {
        const QStringList lines = QString::fromUtf8(process.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        reason = lines.isEmpty() ? QStringLiteral("the check '%1' failed (exit status %2)")
                                       .arg(command.join(QLatin1Char(' ')))
                                       .arg(process.exitCode())
                                 : lines.last().trimmed().left(400);
    }
    const QMutexLocker lock(&s_mutex);
    s_results.insert(key, reason);
    return reason;
}

QString Target::settingVariable(const QString &target, const QString &setting)
{
    QString name = QStringLiteral("AUTOCOMP_") + target.toUpper() + QLatin1Char('_') + setting.toUpper();
    for (QChar &c : name)
        if (!c.isLetterOrNumber())
            c = QLatin1Char('_');
    return name;
}

} // namespace autocomp
