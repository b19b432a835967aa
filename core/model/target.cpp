#include "model/target.h"

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
        why = runCheck(expandCheck(availableCheck), environment, sandboxReadOnlyDirs());
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
    return runCheck(expandCheck(hardwareCheck), environment, sandboxReadOnlyDirs(), true);
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
        add(path);
    return dirs;
}

QStringList Target::expandCheck(const QStringList &command) const
{
    QStringList out;
    const QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    for (QString arg : command) {
        arg.replace(QStringLiteral("{backend_dir}"), dir);
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
            const bool secret = std::any_of(secretish.begin(), secretish.end(), [&](const QString &s) { return var.toUpper().contains(s); });
            const QString value = secret ? QString() : env.value(var);
            arg.replace(at, end - at + 1, value);
            at += value.size();
        }
        out << arg;
    }
    return out;
}

QString Target::runCheck(const QStringList &command, const QMap<QString, QString> &environment, const QStringList &readOnly, bool gpu)
{
    if (command.isEmpty())
        return {};
    static QMutex s_mutex;
    static QHash<QString, QString> s_results;
    const QString key = command.join(QChar(0)) + QChar(1) + readOnly.join(QChar(0)) + (gpu ? QStringLiteral("gpu") : QString());
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
        reason = lines.isEmpty() ? QStringLiteral("the check '%1' failed (exit status %2)").arg(command.join(QLatin1Char(' '))).arg(process.exitCode())
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
