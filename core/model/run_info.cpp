#include "model/run_info.h"

#include <array>
#include <utility>

namespace autocomp {

namespace {
constexpr std::array<std::pair<RunState, const char *>, 6> s_states{{
    {RunState::Created, "created"},
    {RunState::Running, "running"},
    {RunState::Paused, "paused"},
    {RunState::Finished, "finished"},
    {RunState::Stopped, "stopped"},
    {RunState::Failed, "failed"},
}};
} // namespace

QString toString(RunState state)
{
    for (const auto &[value, name] : s_states)
        if (value == state)
            return QString::fromLatin1(name);
    return {};
}

RunState runStateFromString(const QString &text)
{
    for (const auto &[value, name] : s_states)
        if (text == QLatin1String(name))
            return value;
    return RunState::Failed;
}

} // namespace autocomp
