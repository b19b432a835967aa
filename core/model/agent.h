#pragma once

#include <QString>
#include <QStringList>

namespace autocomp {

struct CodeExample
{
    QString name;
    QString summary;
    QString code;
};

// The prompt material for one target: agents/<name>/ (DESIGN.md §4).
struct Agent
{
    QString name;
    QString dir;
    QString version;
    QString target;
    QString description;
    QString architecture;
    QString isaDocs;
    QStringList menu; // optimization_menu.yaml strategies
    QStringList translationMenu;
    QStringList rulesGeneral;
    QStringList rulesPlanning;
    QStringList rulesCoding;
    QList<CodeExample> codeExamples;
};

} // namespace autocomp
