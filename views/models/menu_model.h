#pragma once

#include "model/strategy_record.h"

#include <QAbstractTableModel>
#include <QHash>
#include <QList>
#include <QString>

namespace autocomp {

// An agent's optimization menu as an editable table: whether the item is offered, its text, and (read-only)
// its record in the runs of the agent (MenuInsights), matched by text.
class MenuModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Columns { EnabledColumn, TextColumn, RecordColumn, ColumnCount };
    enum Roles { SortRole = Qt::UserRole };

    struct Item
    {
        QString text;
        bool enabled = true;
        bool operator==(const Item &other) const = default;
    };

    explicit MenuModel(QObject *parent = nullptr);

    void setItems(const QList<Item> &items);
    QList<Item> items() const { return m_items; }
    // Each strategy's record in past runs, by menu text; `runs` is how many runs they cover.
    void setRecords(const QHash<QString, StrategyRecord> &records, int runs);
    // "offered 8 · chosen 3 · 2 of 5 correct · beam 1 · best 1.40×", or why there is none.
    QString recordText(int row) const;
    QStringList enabledItems() const;
    QStringList disabledItems() const;

    // Appends an item and returns its row.
    int addItem(const QString &text);
    // Moves `row` by `delta` rows (-1 up, +1 down); false at the ends.
    bool moveItem(int row, int delta);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    bool setData(const QModelIndex &index, const QVariant &value, int role = Qt::EditRole) override;
    Qt::ItemFlags flags(const QModelIndex &index) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    bool insertRows(int row, int count, const QModelIndex &parent = {}) override;
    bool removeRows(int row, int count, const QModelIndex &parent = {}) override;
    bool moveRows(const QModelIndex &sourceParent, int sourceRow, int count, const QModelIndex &destinationParent,
                  int destinationChild) override;

Q_SIGNALS:
    // Any change a user made: text, enabled state, rows added, removed or moved.
    void edited();

private:
    QList<Item> m_items;
    QHash<QString, StrategyRecord> m_records;
    int m_recordRuns = -1; // -1: no store was asked
};

} // namespace autocomp
