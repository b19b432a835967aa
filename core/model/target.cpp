#include "model/target.h"

#include <QStandardPaths>

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
    if (missing.isEmpty())
        return {};
    QString reason = QStringLiteral("target '%1' is absent on this machine: %2 not found on PATH").arg(name, missing.join(QLatin1String(", ")));
    if (!requires_.isEmpty())
        reason += QStringLiteral(" (it needs: %1)").arg(requires_);
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
