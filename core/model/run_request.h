#pragma once

#include <QDateTime>
#include <QMetaType>
#include <QString>

namespace autocomp {

// A plan or edited code that a human wrote, in a workbench that does not drive the run, for the process that
// does: the driver takes it at its next control poll (as it takes one from its own window) and records what
// became of it. Kept in the store whatever becomes of it.
struct RunRequest
{
    enum class Kind { Plan, Code };
    enum class State { Pending, Taken, Refused };

    qint64 id = 0;
    qint64 runId = 0;
    Kind kind = Kind::Plan;
    qint64 parentId = 0;
    QString text;
    qint64 fromPid = 0; // who asked
    QString fromHost;
    State state = State::Pending;
    qint64 candidateId = 0; // taken: the first candidate it made
    QString reason; // refused: why
    qint64 driverPid = 0; // who took or refused it
    QString driverHost;
    QDateTime createdAt;
    QDateTime handledAt;

    bool isPending() const { return state == State::Pending; }
    // "plan" | "code", "pending" | "taken" | "refused": as stored.
    static QString kindName(Kind kind) { return kind == Kind::Plan ? QStringLiteral("plan") : QStringLiteral("code"); }
    static QString stateName(State state)
    {
        return state == State::Pending ? QStringLiteral("pending")
            : state == State::Taken    ? QStringLiteral("taken")
                                       : QStringLiteral("refused");
    }
};

} // namespace autocomp

Q_DECLARE_METATYPE(autocomp::RunRequest)
