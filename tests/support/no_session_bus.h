#pragma once
// While it lives, this process looks like one without a desktop session (a server, a fresh VM): no D-Bus
// session bus address, no display, and a runtime folder of its own with no bus socket in it. The variables
// are restored when it goes.
#include <QByteArray>
#include <QFile>
#include <QTemporaryDir>

#include <array>
#include <utility>

namespace autocomp::test {

class NoSessionBus
{
public:
    NoSessionBus()
    {
        for (auto &[name, value] : m_saved)
            value = qgetenv(name);
        qunsetenv("DBUS_SESSION_BUS_ADDRESS");
        qunsetenv("DISPLAY");
        qputenv("XDG_RUNTIME_DIR", QFile::encodeName(m_runtime.path()));
    }
    ~NoSessionBus()
    {
        for (const auto &[name, value] : m_saved)
            value.isNull() ? qunsetenv(name) : qputenv(name, value);
    }
    NoSessionBus(const NoSessionBus &) = delete;
    NoSessionBus &operator=(const NoSessionBus &) = delete;

    bool isValid() const { return m_runtime.isValid(); }
    QString runtimeDir() const { return m_runtime.path(); }

private:
    QTemporaryDir m_runtime;
    std::array<std::pair<const char *, QByteArray>, 3> m_saved{
        {{"DBUS_SESSION_BUS_ADDRESS", {}}, {"DISPLAY", {}}, {"XDG_RUNTIME_DIR", {}}}};
};

} // namespace autocomp::test
